//! Lock strategies: how one NC's shard is stored and synchronised.
//!
//! Every strategy implements the sealed [`Strategy`] trait, so the db, the
//! snapshot merge and every behavioural test are written once and run against
//! each of them (the `arc-swap` pattern). [`RwLockStrategy`] is the
//! reference's futex RwLock protocol: it is the compatibility mode and the
//! oracle the other strategies are tested against.

#[cfg(not(interner_loom))]
mod arc_swap;
#[cfg(not(interner_loom))]
mod dashmap;
#[cfg(feature = "lock-free")]
mod lock_free;
mod optimistic;
mod rwlock;

// Not in loom builds: neither crate's synchronisation is modelled by loom.
#[cfg(not(interner_loom))]
pub use self::arc_swap::ArcSwapStrategy;
#[cfg(not(interner_loom))]
pub use self::dashmap::DashMapStrategy;
#[cfg(feature = "lock-free")]
pub use self::lock_free::LockFreeStrategy;
pub use self::optimistic::OptimisticStrategy;
pub use self::rwlock::RwLockStrategy;

/// The strategy [`InternedStringDb`](crate::InternedStringDb) uses unless told
/// otherwise.
pub type DefaultStrategy = OptimisticStrategy;

/// A lock strategy for the per-NC shards. Sealed: the strategies are the ones
/// this crate ships, each tested against the reference protocol.
pub trait Strategy: imp::ShardOps {
    /// A short, stable name for reports and benchmarks.
    const NAME: &'static str;
}

/// What registering an (id, bytes) pair did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Registered {
    /// The pair was new: the bytes were copied into the shard.
    Inserted,
    /// The shard already held the id with the same bytes; nothing was
    /// allocated.
    AlreadyPresent,
    /// The shard holds the id with different bytes (a 50-bit collision, or a
    /// caller-supplied id that does not match). The first string is kept and
    /// the conflict is recorded.
    Conflict,
}

pub(crate) mod imp {
    //! The strategy interface itself. The module is private, so its items are
    //! nameable only inside the crate: the trait is sealed and nothing here is
    //! public API.

    /// Limits a shard is built with.
    #[derive(Debug, Clone, Copy)]
    pub struct ShardConfig {
        /// Bytes of string data the shard may hold; `usize::MAX` for no cap.
        pub byte_cap: usize,
        /// Entries the shard can hold before it first grows.
        pub initial_capacity: usize,
    }

    /// Why a shard refused an insert.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum Refusal {
        /// The shard is closed.
        Closed,
        /// The byte cap would be exceeded.
        CapReached {
            /// Bytes already stored.
            used: usize,
            /// The cap.
            cap: usize,
        },
        /// Memory for the entry could not be allocated.
        OutOfMemory,
    }

    use crate::sync::{AtomicBool, AtomicUsize, Ordering};

    /// What registering `bytes` found when the shard already stores `stored`
    /// under the id: the same string, or a conflict reported through
    /// `on_conflict`. One definition for every strategy.
    #[inline]
    pub fn compare(
        stored: &[u8],
        bytes: &[u8],
        on_conflict: impl FnOnce(&[u8]),
    ) -> super::Registered {
        if crate::raw::bytes_eq(stored, bytes) {
            super::Registered::AlreadyPresent
        } else {
            on_conflict(stored);
            super::Registered::Conflict
        }
    }

    /// An NC's open flag, for strategies whose state has no lock around it.
    /// Closing is then a flag: an intern already past its check may still
    /// complete after the close returns.
    #[derive(Debug)]
    #[cfg_attr(interner_loom, allow(dead_code))] // its users are not in loom builds
    pub struct OpenFlag(AtomicBool);

    #[cfg_attr(interner_loom, allow(dead_code))]
    impl OpenFlag {
        /// An open NC.
        pub fn new() -> Self {
            OpenFlag(AtomicBool::new(true))
        }

        /// Whether the NC is open (acquire: pairs with `set`).
        #[inline]
        pub fn is_open(&self) -> bool {
            self.0.load(Ordering::Acquire)
        }

        /// `Err(Closed)` if the NC is closed.
        #[inline]
        pub fn check(&self) -> Result<(), Refusal> {
            if self.is_open() {
                Ok(())
            } else {
                Err(Refusal::Closed)
            }
        }

        /// Opens or closes the NC.
        pub fn set(&self, open: bool) {
            self.0.store(open, Ordering::Release);
        }
    }

    /// An owned copy of `bytes`, allocated fallibly: running out of memory
    /// is a refusal, not an abort.
    pub fn try_copy(bytes: &[u8]) -> Result<Box<[u8]>, Refusal> {
        let mut owned = Vec::new();
        owned
            .try_reserve_exact(bytes.len())
            .map_err(|_| Refusal::OutOfMemory)?;
        owned.extend_from_slice(bytes);
        Ok(owned.into_boxed_slice())
    }

    /// Whether `needed` more bytes fit under `cap` beside `used`.
    pub fn check_cap(used: usize, cap: usize, needed: usize) -> Result<(), Refusal> {
        if needed > cap.saturating_sub(used) {
            return Err(Refusal::CapReached { used, cap });
        }
        Ok(())
    }

    /// Reserves `needed` bytes of `cap` on a shared counter of bytes used,
    /// for strategies whose inserts are not serialised by one lock. Counts
    /// each failed compare-and-swap in this thread's contention counters.
    #[cfg_attr(interner_loom, allow(dead_code))] // its users are not in loom builds
    pub fn reserve_bytes(used: &AtomicUsize, cap: usize, needed: usize) -> Result<(), Refusal> {
        let mut current = used.load(Ordering::Relaxed);
        loop {
            check_cap(current, cap, needed)?;
            // Relaxed: the counter only bounds the total; it orders nothing.
            match used.compare_exchange(
                current,
                current + needed,
                Ordering::Relaxed,
                Ordering::Relaxed,
            ) {
                Ok(_) => return Ok(()),
                Err(now) => {
                    crate::contention::record_cas_retry();
                    current = now;
                }
            }
        }
    }

    /// [`ShardOps::with_entry_unlocked`] for a strategy whose `with_entry`
    /// holds a lock: the bytes are copied out, and `f` runs once the lock is
    /// released (under it, an intern from `f` would wait for itself).
    pub fn with_copied_entry<S: ShardOps, R>(
        shard: &S::Shard,
        id: u64,
        f: impl FnOnce(&[u8]) -> R,
    ) -> Option<R> {
        S::with_entry(shard, id, |stored| Box::<[u8]>::from(stored)).map(|bytes| f(&bytes))
    }

    /// Entries and bytes held by one shard.
    #[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
    pub struct ShardStats {
        /// Distinct ids stored.
        pub entries: usize,
        /// Bytes of string data stored.
        pub bytes: usize,
    }

    /// The operations every strategy's shard provides.
    pub trait ShardOps: Send + Sync + Sized + 'static {
        /// One NC's storage.
        type Shard: Send + Sync;

        /// Whether a snapshot must hold the db's global lock for read across
        /// the whole-array merge, and an open/close must hold it for write
        /// (the reference protocol).
        const GLOBAL_MERGE_LOCK: bool;

        /// An empty, open shard, with room for `config.initial_capacity`
        /// entries allocated fallibly: `Err(OutOfMemory)` if it cannot be.
        fn new_shard(config: &ShardConfig) -> Result<Self::Shard, Refusal>;

        /// Registers `id → bytes`. `id_is_hash` says that `id` is the db's
        /// id of `bytes` (an intern), not a caller's (`register`, the C
        /// ABI). `on_conflict` is called with the stored bytes when the shard
        /// already maps `id` to other bytes; it runs where the reference logs
        /// (for lock strategies, under the lock).
        fn register(
            shard: &Self::Shard,
            id: u64,
            bytes: &[u8],
            id_is_hash: bool,
            on_conflict: impl FnOnce(&[u8]),
        ) -> Result<super::Registered, Refusal>;

        /// The hit fast path: the id of `bytes` if the shard is open and
        /// holds exactly `bytes` under the db's id of `bytes`, found without
        /// blocking and, where the strategy can, without hashing. A strategy
        /// with no such path answers `None`, and every intern goes through
        /// `register`.
        #[inline]
        fn find_hit(_shard: &Self::Shard, _bytes: &[u8]) -> Option<u64> {
            None
        }

        /// [`find_hit`](Self::find_hit) for each of `names`, writing the id
        /// or `0` (not found) to `ids` (of the same length). A strategy that
        /// can overlap the lookups' cache misses does so.
        #[inline]
        fn find_hits<B: AsRef<[u8]>>(shard: &Self::Shard, names: &[B], ids: &mut [u64]) {
            for (name, id) in names.iter().zip(ids) {
                *id = Self::find_hit(shard, name.as_ref()).unwrap_or(0);
            }
        }

        /// Calls `f` with the bytes stored under `id`, if any. `f` may run
        /// under a lock of the shard: it must not call back into the db.
        fn with_entry<R>(shard: &Self::Shard, id: u64, f: impl FnOnce(&[u8]) -> R) -> Option<R>;

        /// [`with_entry`](Self::with_entry) for a caller's callback, which
        /// may call back into the db, the same NC included (intern, close,
        /// open): `f` runs with no lock of the shard held. The default
        /// copies the bytes out first (`with_copied_entry`), which is right
        /// for every strategy; one whose `with_entry` holds no lock while
        /// `f` runs, or can take a reference count, overrides it.
        #[inline]
        fn with_entry_unlocked<R>(
            shard: &Self::Shard,
            id: u64,
            f: impl FnOnce(&[u8]) -> R,
        ) -> Option<R> {
            with_copied_entry::<Self, R>(shard, id, f)
        }

        /// If the shard is open, calls `f` on every entry and returns true;
        /// returns false for a closed shard. The open check and the walk are
        /// one critical section, so a shard is walked wholly or not at all.
        /// If the shard is open, calls `f` on every entry at or after
        /// position `from` (positions number the entries in the order they
        /// were inserted, from 0) and returns `Some(position after the last
        /// entry visited)`; returns `None` for a closed shard, visiting
        /// nothing. The open check and the walk are one critical section, so
        /// a shard is walked wholly or not at all.
        fn visit_since(
            shard: &Self::Shard,
            from: usize,
            f: impl FnMut(u64, &[u8]),
        ) -> Option<usize>;

        /// Opens or closes the shard. Closing keeps the entries.
        fn set_open(shard: &Self::Shard, open: bool);

        /// Whether the shard is open.
        fn is_open(shard: &Self::Shard) -> bool;

        /// Entries and bytes stored.
        fn stats(shard: &Self::Shard) -> ShardStats;

        /// Frees every entry; the shard is left empty and open.
        fn clear(shard: &mut Self::Shard);
    }
}
