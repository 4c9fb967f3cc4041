//! The reference's protocol: one futex `RwLock` per NC around a `hashbrown`
//! map of id → owned bytes, taken for write on every register (hit or miss)
//! and for read to merge, under the db's global `RwLock` taken for read across
//! the whole-array merge.
//!
//! `std::sync::RwLock` on Linux is the futex RwLock the reference describes.

use super::imp::{check_cap, compare, try_copy, Refusal, ShardConfig, ShardOps, ShardStats};
use super::{Registered, Strategy};
use crate::sync::{self, RwLock};

/// The compatibility strategy: the reference's per-NC futex RwLock protocol,
/// faithfully, including its write lock on every intern.
///
/// It is the oracle that every other strategy is tested against.
#[derive(Debug, Clone, Copy, Default)]
pub struct RwLockStrategy;

impl Strategy for RwLockStrategy {
    const NAME: &'static str = "rwlock";
}

/// One NC's shard under the compatibility protocol.
#[derive(Debug)]
pub struct RwLockShard {
    inner: RwLock<Table>,
}

#[derive(Debug)]
struct Table {
    /// The reference's state byte (`2` = closed), read under the NC lock.
    open: bool,
    map: hashbrown::HashMap<u64, Box<[u8]>>,
    /// The ids in insertion order, for `visit_since`.
    order: Vec<u64>,
    bytes: usize,
    byte_cap: usize,
}

impl ShardOps for RwLockStrategy {
    type Shard = RwLockShard;
    const GLOBAL_MERGE_LOCK: bool = true;

    fn new_shard(config: &ShardConfig) -> Result<RwLockShard, Refusal> {
        let mut map = hashbrown::HashMap::new();
        map.try_reserve(config.initial_capacity)
            .map_err(|_| Refusal::OutOfMemory)?;
        Ok(RwLockShard {
            inner: RwLock::new(Table {
                open: true,
                map,
                order: Vec::new(),
                bytes: 0,
                byte_cap: config.byte_cap,
            }),
        })
    }

    fn register(
        shard: &RwLockShard,
        id: u64,
        bytes: &[u8],
        _id_is_hash: bool,
        on_conflict: impl FnOnce(&[u8]),
    ) -> Result<Registered, Refusal> {
        let mut table = sync::write(&shard.inner);
        if !table.open {
            return Err(Refusal::Closed);
        }
        if let Some(stored) = table.map.get(&id) {
            return Ok(compare(stored, bytes, on_conflict));
        }
        check_cap(table.bytes, table.byte_cap, bytes.len())?;
        // Allocate before touching the map, and fallibly, so that running out
        // of memory is an error that leaves the table as it was.
        let owned = try_copy(bytes)?;
        table.map.try_reserve(1).map_err(|_| Refusal::OutOfMemory)?;
        table
            .order
            .try_reserve(1)
            .map_err(|_| Refusal::OutOfMemory)?;
        table.map.insert(id, owned);
        table.order.push(id);
        table.bytes += bytes.len();
        Ok(Registered::Inserted)
    }

    fn with_entry<R>(shard: &RwLockShard, id: u64, f: impl FnOnce(&[u8]) -> R) -> Option<R> {
        sync::read(&shard.inner).map.get(&id).map(|b| f(b))
    }

    fn visit_since(
        shard: &RwLockShard,
        from: usize,
        mut f: impl FnMut(u64, &[u8]),
    ) -> Option<usize> {
        let table = sync::read(&shard.inner);
        if !table.open {
            return None;
        }
        for id in table.order.get(from..).unwrap_or_default() {
            f(*id, &table.map[id]);
        }
        Some(table.order.len())
    }

    fn set_open(shard: &RwLockShard, open: bool) {
        sync::write(&shard.inner).open = open;
    }

    fn is_open(shard: &RwLockShard) -> bool {
        sync::read(&shard.inner).open
    }

    fn stats(shard: &RwLockShard) -> ShardStats {
        let table = sync::read(&shard.inner);
        ShardStats {
            entries: table.map.len(),
            bytes: table.bytes,
        }
    }

    fn clear(shard: &mut RwLockShard) {
        let mut table = sync::write(&shard.inner);
        table.map = hashbrown::HashMap::new();
        table.order = Vec::new();
        table.bytes = 0;
        table.open = true;
    }
}
