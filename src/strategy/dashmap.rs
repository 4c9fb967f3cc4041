//! A `dashmap` shard: the common Rust choice for a concurrent map (a sharded
//! `RwLock<HashMap>` inside), keyed by id.

use dashmap::mapref::entry::Entry;
use dashmap::DashMap;

use super::admission::{try_copy, ByteBudget, OpenFlag};
use super::id_keyed::{intern_by_id, Found, IdKeyedMap};
use super::shard::{
    ConflictSink, FastPath, Interned, Key, Refusal, Sealed, Shard, ShardConfig, ShardStats,
};
use super::Strategy;
use crate::sync::{self, Mutex, OnceLock};

/// A strategy over `dashmap::DashMap<u64, Box<[u8]>>`: read-locks one of the
/// map's internal shards on a hit, write-locks it on a miss.
///
/// Wins over [`RwLockStrategy`](super::RwLockStrategy) when many threads
/// share one NC (the map's internal sharding spreads them); loses to
/// [`OptimisticStrategy`](super::OptimisticStrategy) on hits, which take a
/// read lock (an atomic read-modify-write on a shared line) here.
///
/// Closing an NC is a flag: an intern already past its check
/// may still complete after `close_nc` returns (the optimistic and rwlock
/// strategies exclude that).
#[derive(Debug, Clone, Copy, Default)]
pub struct DashMapStrategy;

impl Strategy for DashMapStrategy {
    const NAME: &'static str = "dashmap";
    type Shard = DashMapShard;
}

impl Sealed for DashMapStrategy {}

/// One NC's shard.
#[derive(Debug)]
pub struct DashMapShard {
    map: DashMap<u64, Box<[u8]>>,
    /// The ids in insertion order, for `walk`. Pushed while the
    /// map's entry is held; read by copying the ids out, so that no thread
    /// holds this lock while it waits for one of the map's.
    order: Mutex<Vec<u64>>,
    open: OpenFlag,
    bytes: ByteBudget,
}

/// dashmap's own default sharding (4 × the CPUs, a power of two), made
/// explicit: `try_reserve` reserves per internal shard, so the capacity is
/// split by it. Computed once: `available_parallelism` reads cgroup files,
/// and `DashMap::new` would call it for every shard of every db.
fn internal_shards() -> usize {
    static SHARDS: OnceLock<usize> = OnceLock::new();
    *SHARDS.get_or_init(|| {
        std::thread::available_parallelism()
            .map_or(1, usize::from)
            .saturating_mul(4)
            .next_power_of_two()
    })
}

/// A hit takes a read lock of one of the map's internal shards; a miss
/// its write lock, through the map's entry.
impl IdKeyedMap for &DashMapShard {
    fn check_open(&self) -> Result<(), Refusal> {
        self.open.check()
    }

    fn get<R>(&self, id: u64, f: impl FnOnce(&[u8]) -> R) -> Option<R> {
        self.map.get(&id).map(|stored| f(&stored))
    }

    fn insert<R>(&mut self, id: u64, bytes: &[u8], found: impl FnOnce(&[u8]) -> R) -> Found<R> {
        match self.map.entry(id) {
            Entry::Occupied(stored) => Ok(Some(found(stored.get()))),
            Entry::Vacant(slot) => {
                let owned = try_copy(bytes)?;
                let mut order = sync::lock(&self.order);
                order.try_reserve(1).map_err(|_| Refusal::OutOfMemory)?;
                // Reserve the bytes against the cap atomically: the map's
                // internal shards do not serialise all inserts.
                self.bytes.reserve(bytes.len())?;
                slot.insert(owned);
                order.push(id);
                Ok(None)
            }
        }
    }
}

impl FastPath for DashMapShard {}

impl Shard for DashMapShard {
    type ContextAlign = ();

    fn new(config: &ShardConfig) -> Result<Self, Refusal> {
        let shards = internal_shards();
        let mut map = DashMap::with_capacity_and_shard_amount(0, shards);
        map.try_reserve(config.initial_capacity.div_ceil(shards))
            .map_err(|_| Refusal::OutOfMemory)?;
        Ok(DashMapShard {
            map,
            order: Mutex::new(Vec::new()),
            open: OpenFlag::new(),
            bytes: ByteBudget::new(config.byte_cap),
        })
    }

    fn intern(&self, key: Key<'_>, conflicts: ConflictSink<'_>) -> Interned {
        intern_by_id(&mut &*self, key, conflicts)
    }

    fn resolve<R>(&self, id: u64, f: impl FnOnce(&[u8]) -> R) -> Option<R> {
        self.map.get(&id).map(|stored| f(&stored))
    }

    fn walk(&self, from: usize, mut f: impl FnMut(u64, &[u8])) -> Option<usize> {
        if !self.open.is_open() {
            return None;
        }
        let (ids, end) = {
            let order = sync::lock(&self.order);
            (order.get(from..).unwrap_or_default().to_vec(), order.len())
        };
        for id in ids {
            // Pushed after its insert, and entries are never removed.
            if let Some(bytes) = self.map.get(&id) {
                f(id, &bytes);
            }
        }
        Some(end)
    }

    fn set_open(&self, open: bool) {
        self.open.set(open);
    }

    fn is_open(&self) -> bool {
        self.open.is_open()
    }

    fn stats(&self) -> ShardStats {
        ShardStats {
            entries: self.map.len(),
            bytes: self.bytes.used(),
        }
    }
}
