//! The lock-free strategy: no mutex anywhere, misses included. Safe code
//! over its shard in `src/raw/lock_free/`, which holds the protocol.

use super::admission::{ByteBudget, OpenFlag};
use super::id_keyed::{intern_by_id, Found, IdKeyedMap};
use super::shard::{
    ConflictSink, FastPath, Interned, Key, Refusal, Sealed, Shard, ShardConfig, ShardStats,
};
use super::Strategy;
use crate::raw::{Inserted, RawLockFreeShard};

/// A strategy with no lock on any path: an id → entry table (placed by a
/// per-shard seeded hash of the id) whose inserts are a compare-and-swap of the entry's pointer
/// into a free slot, grown by a chain of doubling tables that the inserters
/// migrate cooperatively; hits and `resolve` are acquire loads only.
///
/// Entries are listed in insertion order in an append-only array for
/// snapshots and deltas. Memory a growth leaves behind (the smaller tables)
/// is freed by `reset` and drop, not earlier. Closing an NC is a flag, as
/// for [`DashMapStrategy`](super::DashMapStrategy): an intern already past
/// its check may still complete after `close_nc` returns. See
/// `docs/design.md`.
#[derive(Debug, Clone, Copy, Default)]
pub struct LockFreeStrategy;

impl Strategy for LockFreeStrategy {
    const NAME: &'static str = "lock-free";
    type Shard = LockFreeShard;
}

impl Sealed for LockFreeStrategy {}

/// One NC's shard.
pub struct LockFreeShard {
    raw: RawLockFreeShard,
    open: OpenFlag,
    bytes: ByteBudget,
}

impl core::fmt::Debug for LockFreeShard {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        let stats = self.stats();
        f.debug_struct("LockFreeShard")
            .field("open", &self.open.is_open())
            .field("entries", &stats.entries)
            .field("bytes", &stats.bytes)
            .field("byte_cap", &self.bytes.cap())
            .finish()
    }
}

/// Lock-free: a miss reserves its bytes, then swings a free slot to its
/// entry; an insert that lost the race finds the winner's.
impl IdKeyedMap for &LockFreeShard {
    fn check_open(&self) -> Result<(), Refusal> {
        self.open.check()
    }

    fn get<R>(&self, id: u64, f: impl FnOnce(&[u8]) -> R) -> Option<R> {
        self.raw.find(id).map(f)
    }

    fn insert<R>(&mut self, id: u64, bytes: &[u8], found: impl FnOnce(&[u8]) -> R) -> Found<R> {
        self.bytes.reserve(bytes.len())?;
        let inserted = self.raw.insert(id, bytes);
        if !matches!(inserted, Ok(Inserted::New)) {
            self.bytes.release(bytes.len());
        }
        match inserted {
            Ok(Inserted::New) => Ok(None),
            Ok(Inserted::Found(stored)) => Ok(Some(found(stored))),
            Err(_) => Err(Refusal::OutOfMemory),
        }
    }
}

impl FastPath for LockFreeShard {}

impl Shard for LockFreeShard {
    type ContextAlign = ();

    fn new(config: &ShardConfig) -> Result<Self, Refusal> {
        Ok(LockFreeShard {
            raw: RawLockFreeShard::try_new(config.initial_capacity)
                .map_err(|_| Refusal::OutOfMemory)?,
            open: OpenFlag::new(),
            bytes: ByteBudget::new(config.byte_cap),
        })
    }

    fn intern(&self, key: Key<'_>, conflicts: ConflictSink<'_>) -> Interned {
        intern_by_id(&mut &*self, key, conflicts)
    }

    fn resolve<R>(&self, id: u64, f: impl FnOnce(&[u8]) -> R) -> Option<R> {
        self.raw.find(id).map(f)
    }

    /// No copy: `resolve` holds no lock while `f` runs.
    fn resolve_unlocked<R>(&self, id: u64, f: impl FnOnce(&[u8]) -> R) -> Option<R> {
        self.resolve(id, f)
    }

    fn walk(&self, from: usize, f: impl FnMut(u64, &[u8])) -> Option<usize> {
        if !self.open.is_open() {
            return None;
        }
        Some(self.raw.for_each_since(from, f))
    }

    fn set_open(&self, open: bool) {
        self.open.set(open);
    }

    fn is_open(&self) -> bool {
        self.open.is_open()
    }

    fn stats(&self) -> ShardStats {
        ShardStats {
            entries: self.raw.len(),
            bytes: self.bytes.used(),
        }
    }
}
