//! The reference's protocol over a choice of reader-writer lock: one lock
//! per NC around a `hashbrown` map of id → owned bytes, taken for write on
//! every register (hit or miss) and for read to look up and to merge, under
//! the db's global `RwLock` taken for read across the whole-array merge.
//!
//! The protocol is written once ([`LockedTable`] and the blanket
//! [`ShardOps`] impl); each strategy names only its lock, so the benchmark
//! compares lock implementations and nothing else:
//!
//! * [`RwLockStrategy`]: `std::sync::RwLock`, the futex RwLock the
//!   reference describes (the compatibility mode);
//! * [`ShardedLockStrategy`]: crossbeam's `ShardedLock`, whose readers lock
//!   only their own shard of the lock;
//! * [`ParkingLotStrategy`]: `parking_lot::RwLock` (inline fast path,
//!   eventual fairness).

use core::ops::{Deref, DerefMut};

use super::imp::{check_cap, compare, try_copy, Refusal, ShardConfig, ShardOps, ShardStats};
use super::{Registered, Strategy};
use crate::sync;

/// A reader-writer lock that can guard one NC's [`LockedTable`]. Acquiring
/// tries first and counts a failed try in the thread's
/// [`contention`](crate::contention) counters; poisoning is recovered.
pub trait NcLock: Send + Sync + Sized + 'static {
    /// A read guard.
    type Read<'a>: Deref<Target = LockedTable>
    where
        Self: 'a;
    /// A write guard.
    type Write<'a>: DerefMut<Target = LockedTable>
    where
        Self: 'a;
    /// The lock around `table`.
    fn new(table: LockedTable) -> Self;
    /// Takes the lock for read.
    fn read(&self) -> Self::Read<'_>;
    /// Takes the lock for write.
    fn write(&self) -> Self::Write<'_>;
}

/// A strategy that is the reference protocol over the lock `Lock`. (Not a
/// subtrait of [`Strategy`]: the blanket `ShardOps` impl below would then
/// depend on itself.)
pub trait LockedStrategy: Send + Sync + Sized + 'static {
    /// The per-NC lock.
    type Lock: NcLock;
}

/// One NC's state under a lock.
#[derive(Debug)]
pub struct LockedTable {
    /// The reference's state byte (`2` = closed), read under the NC lock.
    open: bool,
    map: hashbrown::HashMap<u64, Box<[u8]>>,
    /// The ids in insertion order, for `visit_since`.
    order: Vec<u64>,
    bytes: usize,
    byte_cap: usize,
}

/// The compatibility strategy: the reference's per-NC futex RwLock protocol,
/// faithfully, including its write lock on every intern.
///
/// It is the oracle that every other strategy is tested against.
#[derive(Debug, Clone, Copy, Default)]
pub struct RwLockStrategy;

impl Strategy for RwLockStrategy {
    const NAME: &'static str = "rwlock";
}

impl LockedStrategy for RwLockStrategy {
    type Lock = sync::RwLock<LockedTable>;
}

impl NcLock for sync::RwLock<LockedTable> {
    type Read<'a> = sync::RwLockReadGuard<'a, LockedTable>;
    type Write<'a> = sync::RwLockWriteGuard<'a, LockedTable>;
    fn new(table: LockedTable) -> Self {
        sync::RwLock::new(table)
    }
    fn read(&self) -> Self::Read<'_> {
        sync::read(self)
    }
    fn write(&self) -> Self::Write<'_> {
        sync::write(self)
    }
}

/// The reference protocol over crossbeam's `ShardedLock`: the textbook
/// reader-scalable RwLock. A reader locks only the shard of the lock its
/// thread maps to, so readers of one NC on different cores touch different
/// cache lines; a writer locks every shard. Every intern writes (the
/// reference protocol), so the readers this helps are lookups and merges.
#[cfg(all(feature = "sharded-lock", not(interner_loom)))]
#[derive(Debug, Clone, Copy, Default)]
pub struct ShardedLockStrategy;

#[cfg(all(feature = "sharded-lock", not(interner_loom)))]
impl Strategy for ShardedLockStrategy {
    const NAME: &'static str = "sharded-lock";
}

#[cfg(all(feature = "sharded-lock", not(interner_loom)))]
impl LockedStrategy for ShardedLockStrategy {
    type Lock = sync::ShardedLock<LockedTable>;
}

#[cfg(all(feature = "sharded-lock", not(interner_loom)))]
impl NcLock for sync::ShardedLock<LockedTable> {
    type Read<'a> = sync::ShardedLockReadGuard<'a, LockedTable>;
    type Write<'a> = sync::ShardedLockWriteGuard<'a, LockedTable>;
    fn new(table: LockedTable) -> Self {
        sync::ShardedLock::new(table)
    }
    fn read(&self) -> Self::Read<'_> {
        sync::read_sharded(self)
    }
    fn write(&self) -> Self::Write<'_> {
        sync::write_sharded(self)
    }
}

/// The reference protocol over `parking_lot::RwLock`: the same protocol as
/// [`RwLockStrategy`] on a different lock implementation (an inline fast
/// path, parking in a global table, eventual fairness).
#[cfg(all(feature = "parking-lot", not(interner_loom)))]
#[derive(Debug, Clone, Copy, Default)]
pub struct ParkingLotStrategy;

#[cfg(all(feature = "parking-lot", not(interner_loom)))]
impl Strategy for ParkingLotStrategy {
    const NAME: &'static str = "parking-lot";
}

#[cfg(all(feature = "parking-lot", not(interner_loom)))]
impl LockedStrategy for ParkingLotStrategy {
    type Lock = sync::ParkingLotRwLock<LockedTable>;
}

#[cfg(all(feature = "parking-lot", not(interner_loom)))]
impl NcLock for sync::ParkingLotRwLock<LockedTable> {
    type Read<'a> = sync::ParkingLotReadGuard<'a, LockedTable>;
    type Write<'a> = sync::ParkingLotWriteGuard<'a, LockedTable>;
    fn new(table: LockedTable) -> Self {
        sync::ParkingLotRwLock::new(table)
    }
    fn read(&self) -> Self::Read<'_> {
        sync::read_parking_lot(self)
    }
    fn write(&self) -> Self::Write<'_> {
        sync::write_parking_lot(self)
    }
}

/// One NC's shard under a locked strategy.
#[derive(Debug)]
pub struct LockedShard<L> {
    inner: L,
}

impl<S: LockedStrategy> ShardOps for S {
    type Shard = LockedShard<S::Lock>;
    const GLOBAL_MERGE_LOCK: bool = true;

    fn new_shard(config: &ShardConfig) -> Result<Self::Shard, Refusal> {
        let mut map = hashbrown::HashMap::new();
        map.try_reserve(config.initial_capacity)
            .map_err(|_| Refusal::OutOfMemory)?;
        Ok(LockedShard {
            inner: S::Lock::new(LockedTable {
                open: true,
                map,
                order: Vec::new(),
                bytes: 0,
                byte_cap: config.byte_cap,
            }),
        })
    }

    fn register(
        shard: &Self::Shard,
        id: u64,
        bytes: &[u8],
        _id_is_hash: bool,
        on_conflict: impl FnOnce(&[u8]),
    ) -> Result<Registered, Refusal> {
        let mut table = shard.inner.write();
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

    fn with_entry<R>(shard: &Self::Shard, id: u64, f: impl FnOnce(&[u8]) -> R) -> Option<R> {
        shard.inner.read().map.get(&id).map(|b| f(b))
    }

    fn visit_since(
        shard: &Self::Shard,
        from: usize,
        mut f: impl FnMut(u64, &[u8]),
    ) -> Option<usize> {
        let table = shard.inner.read();
        if !table.open {
            return None;
        }
        for id in table.order.get(from..).unwrap_or_default() {
            f(*id, &table.map[id]);
        }
        Some(table.order.len())
    }

    fn set_open(shard: &Self::Shard, open: bool) {
        shard.inner.write().open = open;
    }

    fn is_open(shard: &Self::Shard) -> bool {
        shard.inner.read().open
    }

    fn stats(shard: &Self::Shard) -> ShardStats {
        let table = shard.inner.read();
        ShardStats {
            entries: table.map.len(),
            bytes: table.bytes,
        }
    }

    fn clear(shard: &mut Self::Shard) {
        let mut table = shard.inner.write();
        table.map = hashbrown::HashMap::new();
        table.order = Vec::new();
        table.bytes = 0;
        table.open = true;
    }
}
