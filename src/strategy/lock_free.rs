//! The lock-free strategy: no mutex anywhere, misses included.

use super::imp::{compare, reserve_bytes, OpenFlag, Refusal, ShardConfig, ShardOps, ShardStats};
use super::{Registered, Strategy};
use crate::raw::{Inserted, RawLockFreeShard};
use crate::sync::{AtomicUsize, Ordering};

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
}

/// One NC's shard.
pub struct LockFreeShard {
    raw: RawLockFreeShard,
    open: OpenFlag,
    /// Bytes stored, or reserved by inserts in progress.
    bytes: AtomicUsize,
    byte_cap: usize,
}

impl ShardOps for LockFreeStrategy {
    type Shard = LockFreeShard;
    const GLOBAL_MERGE_LOCK: bool = false;

    fn new_shard(config: &ShardConfig) -> Result<LockFreeShard, Refusal> {
        Ok(LockFreeShard {
            raw: RawLockFreeShard::try_new(config.initial_capacity).ok_or(Refusal::OutOfMemory)?,
            open: OpenFlag::new(),
            bytes: AtomicUsize::new(0),
            byte_cap: config.byte_cap,
        })
    }

    fn register(
        shard: &LockFreeShard,
        id: u64,
        bytes: &[u8],
        _id_is_hash: bool,
        on_conflict: impl FnOnce(&[u8]),
    ) -> Result<Registered, Refusal> {
        shard.open.check()?;
        // Look first: a hit allocates and reserves nothing.
        if let Some(stored) = shard.raw.find(id) {
            return Ok(compare(stored, bytes, on_conflict));
        }
        reserve_bytes(&shard.bytes, shard.byte_cap, bytes.len())?;
        let inserted = shard.raw.insert(id, bytes);
        if !matches!(inserted, Ok(Inserted::New)) {
            // Relaxed: the counter only bounds the total.
            shard.bytes.fetch_sub(bytes.len(), Ordering::Relaxed);
        }
        match inserted {
            Ok(Inserted::New) => Ok(Registered::Inserted),
            Ok(Inserted::Found(stored)) => Ok(compare(stored, bytes, on_conflict)),
            Err(_) => Err(Refusal::OutOfMemory),
        }
    }

    fn with_entry<R>(shard: &LockFreeShard, id: u64, f: impl FnOnce(&[u8]) -> R) -> Option<R> {
        shard.raw.find(id).map(f)
    }

    /// No copy: `with_entry` holds no lock while `f` runs.
    fn with_entry_unlocked<R>(
        shard: &LockFreeShard,
        id: u64,
        f: impl FnOnce(&[u8]) -> R,
    ) -> Option<R> {
        Self::with_entry(shard, id, f)
    }

    fn visit_since(shard: &LockFreeShard, from: usize, f: impl FnMut(u64, &[u8])) -> Option<usize> {
        if !shard.open.is_open() {
            return None;
        }
        Some(shard.raw.for_each_since(from, f))
    }

    fn set_open(shard: &LockFreeShard, open: bool) {
        shard.open.set(open);
    }

    fn is_open(shard: &LockFreeShard) -> bool {
        shard.open.is_open()
    }

    fn stats(shard: &LockFreeShard) -> ShardStats {
        ShardStats {
            entries: shard.raw.len(),
            bytes: shard.bytes.load(Ordering::Relaxed),
        }
    }

    fn clear(shard: &mut LockFreeShard) {
        shard.raw.clear();
        shard.bytes.store(0, Ordering::Relaxed);
        shard.open.set(true);
    }
}
