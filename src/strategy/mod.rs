//! Lock strategies: how one NC's shard is stored and synchronised.
//!
//! Every strategy implements the sealed [`Strategy`] trait, so the db, the
//! snapshot merge and every behavioural test are written once and run against
//! each of them (the `arc-swap` pattern). [`RwLockStrategy`] is the
//! reference's futex RwLock protocol: the compatibility mode, and the
//! reference every other strategy is compared against, answer by answer, by
//! `tests/differential.rs`.

#[cfg(all(feature = "arc-swap", not(interner_loom)))]
mod arc_swap;
#[cfg(all(feature = "dashmap", not(interner_loom)))]
mod dashmap;
#[cfg(feature = "lock-free")]
mod lock_free;
mod locked;
mod optimistic;
mod parts;

// Not in loom builds: neither crate's synchronisation is modelled by loom.
#[cfg(all(feature = "arc-swap", not(interner_loom)))]
pub use self::arc_swap::ArcSwapStrategy;
#[cfg(all(feature = "dashmap", not(interner_loom)))]
pub use self::dashmap::DashMapStrategy;
#[cfg(feature = "lock-free")]
pub use self::lock_free::LockFreeStrategy;
#[cfg(all(feature = "parking-lot", not(interner_loom)))]
pub use self::locked::ParkingLotStrategy;
pub use self::locked::RwLockStrategy;
#[cfg(all(feature = "sharded-lock", not(interner_loom)))]
pub use self::locked::ShardedLockStrategy;
pub use self::optimistic::OptimisticStrategy;

/// Calls [`visit`](Self::visit) once per strategy: what
/// `for_each_strategy` hands each strategy this build ships to. Not public
/// API: a hook for this workspace (feature `test-util`).
#[cfg(feature = "test-util")]
#[doc(hidden)]
pub trait StrategyVisitor {
    /// Called with strategy `S`.
    fn visit<S: Strategy>(&mut self);
}

/// The one list of strategies: calls `visitor` with every strategy this
/// build ships, in report order (the default first). The tests, the loom
/// models, the fuzz targets, the harness and the benches run from it, so
/// adding a strategy touches its own file and this module (its `mod`, its
/// `pub use` and its line here), plus its feature in `Cargo.toml` if it is
/// optional. What they size differently per strategy is a property of the
/// strategy ([`Strategy::COPY_ON_WRITE`]).
///
/// Not public API: a hook for this workspace (feature `test-util`).
#[cfg(feature = "test-util")]
#[doc(hidden)]
pub fn for_each_strategy(visitor: &mut impl StrategyVisitor) {
    visitor.visit::<OptimisticStrategy>();
    #[cfg(feature = "lock-free")]
    visitor.visit::<LockFreeStrategy>();
    visitor.visit::<RwLockStrategy>();
    #[cfg(all(feature = "sharded-lock", not(interner_loom)))]
    visitor.visit::<ShardedLockStrategy>();
    #[cfg(all(feature = "parking-lot", not(interner_loom)))]
    visitor.visit::<ParkingLotStrategy>();
    #[cfg(all(feature = "dashmap", not(interner_loom)))]
    visitor.visit::<DashMapStrategy>();
    #[cfg(all(feature = "arc-swap", not(interner_loom)))]
    visitor.visit::<ArcSwapStrategy>();
}

/// The strategy [`InternedStringDb`](crate::InternedStringDb) uses unless told
/// otherwise.
pub type DefaultStrategy = OptimisticStrategy;

/// A lock strategy for the per-NC shards: a marker type naming its shard.
/// Sealed: the strategies are the ones this crate ships, each tested against
/// the reference protocol.
pub trait Strategy: imp::Sealed + Send + Sync + Sized + 'static {
    /// A short, stable name for reports and benchmarks.
    const NAME: &'static str;
    /// Whether every insert copies the NC's whole table (copy-on-write), so
    /// that filling an NC with `n` entries costs O(n²): the tests, benches
    /// and harness give such a strategy smaller fills by this property,
    /// never by its name. `true` for `ArcSwapStrategy` only.
    const COPY_ON_WRITE: bool = false;
    /// One NC's storage. Its interface is private to the crate.
    type Shard: imp::Shard;
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
    //! The shard interface. The module is private, so its items are
    //! nameable only inside the crate: the strategy trait is sealed and
    //! nothing here is public API.

    use super::Registered;

    /// Implemented by the strategies this crate ships, and only by them.
    pub trait Sealed {}

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

    /// Where the id given to [`Shard::register`] comes from.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum IdSource {
        /// The db's id of the bytes (`intern`, or a caller's id that
        /// happens to be the hash): a hit path keyed by the bytes may find
        /// the entry.
        Hash,
        /// A caller's id that is not the hash (`register`, the C ABI).
        Caller,
    }

    /// What a [`Shard::find_hit`] that missed learned about the bytes, handed
    /// to [`Shard::register_after_miss`] so that the miss need not work it
    /// out again: for the optimistic shard, the bytes' hash (its placement
    /// in the by-bytes index); nothing for the others.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct Probe(pub(crate) Option<u64>);

    impl Probe {
        /// A probe that learned nothing (no probe, or a strategy without one).
        pub const NONE: Probe = Probe(None);
    }

    /// A name a batch's lookups missed, for [`Shard::register_misses`]:
    /// its bytes and the db's id of them.
    #[derive(Debug, Clone, Copy, Default)]
    pub struct Miss<'a> {
        /// The db's id of `bytes`.
        pub id: u64,
        /// The name.
        pub bytes: &'a [u8],
    }

    /// Entries and bytes held by one shard.
    #[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
    pub struct ShardStats {
        /// Distinct ids stored.
        pub entries: usize,
        /// Bytes of string data stored.
        pub bytes: usize,
    }

    /// A cache line's alignment, as [`Shard::ContextAlign`].
    #[derive(Debug)]
    #[repr(align(64))]
    pub struct LineAligned;

    /// One NC's storage under a strategy: the operations the db, the
    /// snapshot merge and the tests are written against, once.
    pub trait Shard: Send + Sync + Sized + 'static {
        /// Whether a snapshot must hold the db's global lock for read across
        /// the whole-array merge, and an open/close must hold it for write
        /// (the reference protocol).
        const GLOBAL_MERGE_LOCK: bool;

        /// The alignment of the NC's context that holds the shard (its
        /// first field): [`LineAligned`] for a shard whose first fields are
        /// the line every hit reads, `()` for the others, whose contexts
        /// then take no padding for it. (A zero-length array of it sets the
        /// context's alignment, `crate::nc::NcContext`.)
        type ContextAlign: Send + Sync + 'static;

        /// An empty, open shard, with room for `config.initial_capacity`
        /// entries allocated fallibly: `Err(OutOfMemory)` if it cannot be.
        fn new(config: &ShardConfig) -> Result<Self, Refusal>;

        /// Registers `id → bytes`. `on_conflict` is called with the stored
        /// bytes when the shard already maps `id` to other bytes; it runs
        /// where the reference logs (for lock strategies, under the lock).
        fn register(
            &self,
            id: u64,
            bytes: &[u8],
            source: IdSource,
            on_conflict: impl FnOnce(&[u8]),
        ) -> Result<Registered, Refusal>;

        /// [`register`](Self::register) of the db's id of `bytes`
        /// (`IdSource::Hash`) right after [`find_hit`](Self::find_hit)
        /// missed with `probe`: a strategy whose `register` would probe the
        /// same way first skips that probe, and reuses what the probe
        /// computed. The default is `register`.
        #[inline]
        fn register_after_miss(
            &self,
            id: u64,
            bytes: &[u8],
            probe: Probe,
            on_conflict: impl FnOnce(&[u8]),
        ) -> Result<Registered, Refusal> {
            let _ = probe;
            self.register(id, bytes, IdSource::Hash, on_conflict)
        }

        /// [`register_after_miss`](Self::register_after_miss) of each of
        /// `misses`, in order, with no probe: what a batch's lookups missed.
        /// `on_conflict` gets the index in `misses` with the kept bytes. Stops
        /// at the first refusal, with its index: the misses before it are
        /// registered, none after it. A strategy with a writer lock takes it
        /// once for all of them; the default registers them one by one.
        fn register_misses(
            &self,
            misses: &[Miss<'_>],
            mut on_conflict: impl FnMut(usize, &[u8]),
        ) -> Result<(), (usize, Refusal)> {
            for (at, miss) in misses.iter().enumerate() {
                self.register_after_miss(miss.id, miss.bytes, Probe::NONE, |kept| {
                    on_conflict(at, kept)
                })
                .map_err(|refusal| (at, refusal))?;
            }
            Ok(())
        }

        /// The hit fast path: the id of `bytes` if the shard is open and
        /// holds exactly `bytes` under the db's id of `bytes`, found without
        /// blocking and, where the strategy can, without hashing. Otherwise
        /// what the probe learned, for
        /// [`register_after_miss`](Self::register_after_miss). A strategy
        /// with no such path never finds, and every intern goes through
        /// `register`.
        #[inline]
        fn find_hit(&self, _bytes: &[u8]) -> Result<u64, Probe> {
            Err(Probe::NONE)
        }

        /// [`find_hit`](Self::find_hit) for an open or a closed shard, for
        /// `lookup`: the id of `bytes` if the shard holds exactly `bytes`
        /// under the db's id of `bytes` and finds it without blocking. `None`
        /// is no answer (the caller asks [`with_entry`](Self::with_entry));
        /// the default never answers.
        #[inline]
        fn find_present(&self, _bytes: &[u8]) -> Option<u64> {
            None
        }

        /// [`find_hit`](Self::find_hit) for each of `names`, writing the id
        /// or `0` (not found) to `ids` (of the same length). A strategy that
        /// can overlap the lookups' cache misses does so.
        #[inline]
        fn find_hits<B: AsRef<[u8]>>(&self, names: &[B], ids: &mut [u64]) {
            for (name, id) in names.iter().zip(ids) {
                *id = self.find_hit(name.as_ref()).unwrap_or(0);
            }
        }

        /// Calls `f` with the bytes stored under `id`, if any. `f` may run
        /// under a lock of the shard: it must not call back into the db.
        fn with_entry<R>(&self, id: u64, f: impl FnOnce(&[u8]) -> R) -> Option<R>;

        /// [`with_entry`](Self::with_entry) for a caller's callback, which
        /// may call back into the db, the same NC included (intern, close,
        /// open): `f` runs with no lock of the shard held. The default
        /// copies the bytes out first, which is right for every strategy;
        /// one whose `with_entry` holds no lock while `f` runs, or can take
        /// a reference count, overrides it.
        #[inline]
        fn with_entry_unlocked<R>(&self, id: u64, f: impl FnOnce(&[u8]) -> R) -> Option<R> {
            self.with_entry(id, |stored| Box::<[u8]>::from(stored))
                .map(|bytes| f(&bytes))
        }

        /// If the shard is open, calls `f` on every entry at or after
        /// position `from` (positions number the entries in the order they
        /// were inserted, from 0) and returns `Some(position after the last
        /// entry visited)`; returns `None` for a closed shard, visiting
        /// nothing. The open check and the walk are one critical section, so
        /// a shard is walked wholly or not at all.
        fn visit_since(&self, from: usize, f: impl FnMut(u64, &[u8])) -> Option<usize>;

        /// Opens or closes the shard. Closing keeps the entries.
        fn set_open(&self, open: bool);

        /// Whether the shard is open.
        fn is_open(&self) -> bool;

        /// Entries and bytes stored.
        fn stats(&self) -> ShardStats;
    }
}
