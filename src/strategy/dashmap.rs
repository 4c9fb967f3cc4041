//! A `dashmap` shard: the common Rust choice for a concurrent map (a sharded
//! `RwLock<HashMap>` inside), keyed by id.

use dashmap::mapref::entry::Entry;
use dashmap::DashMap;

use super::imp::{
    compare, reserve_bytes, try_copy, OpenFlag, Refusal, ShardConfig, ShardOps, ShardStats,
};
use super::{Registered, Strategy};
use crate::sync::{self, AtomicUsize, Mutex, Ordering};

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
}

/// One NC's shard.
pub struct DashMapShard {
    map: DashMap<u64, Box<[u8]>>,
    /// The ids in insertion order, for `visit_since`. Pushed while the
    /// map's entry is held; read by copying the ids out, so that no thread
    /// holds this lock while it waits for one of the map's.
    order: Mutex<Vec<u64>>,
    open: OpenFlag,
    bytes: AtomicUsize,
    byte_cap: usize,
}

impl ShardOps for DashMapStrategy {
    type Shard = DashMapShard;
    const GLOBAL_MERGE_LOCK: bool = false;

    fn new_shard(config: &ShardConfig) -> Result<DashMapShard, Refusal> {
        // dashmap's own default sharding, made explicit: its `try_reserve`
        // reserves per internal shard, so the capacity is split here.
        let shards = std::thread::available_parallelism()
            .map_or(1, usize::from)
            .saturating_mul(4)
            .next_power_of_two();
        let mut map = DashMap::with_capacity_and_shard_amount(0, shards);
        map.try_reserve(config.initial_capacity.div_ceil(shards))
            .map_err(|_| Refusal::OutOfMemory)?;
        Ok(DashMapShard {
            map,
            order: Mutex::new(Vec::new()),
            open: OpenFlag::new(),
            bytes: AtomicUsize::new(0),
            byte_cap: config.byte_cap,
        })
    }

    fn register(
        shard: &DashMapShard,
        id: u64,
        bytes: &[u8],
        _id_is_hash: bool,
        on_conflict: impl FnOnce(&[u8]),
    ) -> Result<Registered, Refusal> {
        shard.open.check()?;
        // Read first: a hit takes only a read lock.
        let stored = match shard.map.get(&id) {
            Some(stored) => stored,
            None => match shard.map.entry(id) {
                Entry::Occupied(stored) => stored.into_ref().downgrade(),
                Entry::Vacant(slot) => {
                    let owned = try_copy(bytes)?;
                    let mut order = sync::lock(&shard.order);
                    order.try_reserve(1).map_err(|_| Refusal::OutOfMemory)?;
                    // Reserve the bytes against the cap atomically: the
                    // map's internal shards do not serialise all inserts.
                    reserve_bytes(&shard.bytes, shard.byte_cap, bytes.len())?;
                    slot.insert(owned);
                    order.push(id);
                    return Ok(Registered::Inserted);
                }
            },
        };
        Ok(compare(&stored, bytes, on_conflict))
    }

    fn with_entry<R>(shard: &DashMapShard, id: u64, f: impl FnOnce(&[u8]) -> R) -> Option<R> {
        shard.map.get(&id).map(|stored| f(&stored))
    }

    fn visit_since(
        shard: &DashMapShard,
        from: usize,
        mut f: impl FnMut(u64, &[u8]),
    ) -> Option<usize> {
        if !shard.open.is_open() {
            return None;
        }
        let (ids, end) = {
            let order = sync::lock(&shard.order);
            (order.get(from..).unwrap_or_default().to_vec(), order.len())
        };
        for id in ids {
            // Pushed after its insert, and entries are never removed.
            if let Some(bytes) = shard.map.get(&id) {
                f(id, &bytes);
            }
        }
        Some(end)
    }

    fn set_open(shard: &DashMapShard, open: bool) {
        shard.open.set(open);
    }

    fn is_open(shard: &DashMapShard) -> bool {
        shard.open.is_open()
    }

    fn stats(shard: &DashMapShard) -> ShardStats {
        ShardStats {
            entries: shard.map.len(),
            bytes: shard.bytes.load(Ordering::Relaxed),
        }
    }

    fn clear(shard: &mut DashMapShard) {
        shard.map = DashMap::new();
        *sync::lock(&shard.order) = Vec::new();
        shard.bytes.store(0, Ordering::Relaxed);
        shard.open.set(true);
    }
}
