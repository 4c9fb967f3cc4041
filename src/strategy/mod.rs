//! Lock strategies: how one NC's shard is stored and synchronised.
//!
//! Every strategy implements the sealed [`Strategy`] trait, so the db, the
//! snapshot merge and every behavioural test are written once and run against
//! each of them (the `arc-swap` pattern). [`RwLockStrategy`] is the
//! reference's futex RwLock protocol: the compatibility mode, and the
//! reference every other strategy is compared against, answer by answer, by
//! `tests/it/differential.rs`.

mod admission;
#[cfg(all(feature = "arc-swap", not(interner_loom)))]
mod arc_swap;
#[cfg(all(feature = "dashmap", not(interner_loom)))]
mod dashmap;
mod id_keyed;
#[cfg(feature = "lock-free")]
mod lock_free;
mod locked;
pub(crate) mod optimistic;
pub(crate) mod shard;
#[cfg(feature = "striped")]
mod striped;
mod stripes;

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
#[cfg(feature = "striped")]
pub use self::striped::StripedStrategy;

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
/// optional. What they size or select differently per strategy is a
/// property of the strategy ([`Strategy::COPY_ON_WRITE`],
/// [`Strategy::RAW_MODULE`]); CI's shell scripts read the list and those
/// properties from `examples/strategies.rs`.
///
/// Not public API: a hook for this workspace (feature `test-util`).
#[cfg(feature = "test-util")]
#[doc(hidden)]
pub fn for_each_strategy(visitor: &mut impl StrategyVisitor) {
    visitor.visit::<OptimisticStrategy>();
    #[cfg(feature = "striped")]
    visitor.visit::<StripedStrategy>();
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

// Each strategy's `src/raw/` module ([`Strategy::RAW_MODULE`]), beside the
// list: a strategy without a line here does not compile.
impl shard::RawCode for OptimisticStrategy {
    const MODULE: Option<&'static str> = Some("optimistic");
}
#[cfg(feature = "striped")]
impl shard::RawCode for StripedStrategy {
    const MODULE: Option<&'static str> = Some("optimistic");
}
#[cfg(feature = "lock-free")]
impl shard::RawCode for LockFreeStrategy {
    const MODULE: Option<&'static str> = Some("lock_free");
}
impl shard::RawCode for RwLockStrategy {
    const MODULE: Option<&'static str> = None;
}
#[cfg(all(feature = "sharded-lock", not(interner_loom)))]
impl shard::RawCode for ShardedLockStrategy {
    const MODULE: Option<&'static str> = None;
}
#[cfg(all(feature = "parking-lot", not(interner_loom)))]
impl shard::RawCode for ParkingLotStrategy {
    const MODULE: Option<&'static str> = None;
}
#[cfg(all(feature = "dashmap", not(interner_loom)))]
impl shard::RawCode for DashMapStrategy {
    const MODULE: Option<&'static str> = None;
}
#[cfg(all(feature = "arc-swap", not(interner_loom)))]
impl shard::RawCode for ArcSwapStrategy {
    const MODULE: Option<&'static str> = None;
}

/// The strategy [`InternedStringDb`](crate::InternedStringDb) uses unless told
/// otherwise.
pub type DefaultStrategy = OptimisticStrategy;

/// A lock strategy for the per-NC shards: a marker type naming its shard.
/// Sealed: the strategies are the ones this crate ships, each tested against
/// the reference protocol.
pub trait Strategy: shard::Sealed + shard::RawCode + Send + Sync + Sized + 'static {
    /// A short, stable name for reports and benchmarks.
    const NAME: &'static str;
    /// Whether every insert copies the NC's whole table (copy-on-write), so
    /// that filling an NC with `n` entries costs O(n²): the tests, benches
    /// and harness give such a strategy smaller fills by this property,
    /// never by its name. `true` for `ArcSwapStrategy` only.
    const COPY_ON_WRITE: bool = false;
    /// Whether a plain intern (`intern`, `intern_batch`) appends its
    /// string without asking whether other bytes hold its id, the
    /// conflict then found and recorded when the by-id direction is next
    /// read (a snapshot, a delta, the conflict list, the counters, or a
    /// resolve of an id the by-id map does not hold yet): `true` for
    /// `OptimisticStrategy` and `StripedStrategy`. Every conflict is still recorded once,
    /// and the first string of an id still wins; but a string interned
    /// again after its conflict was found is a hit, so
    /// [`conflicts_dropped`](crate::InternedStringDb::conflicts_dropped)
    /// counts it once where an eager strategy counts every call.
    const FINDS_CONFLICTS_LAZILY: bool = false;
    /// The module of `src/raw/` (the crate's only unsafe code) that holds
    /// this strategy's shard protocol, such as `Some("lock_free")`, or
    /// `None` for a strategy written in safe Rust over std and other
    /// crates. ThreadSanitizer and the loom mutants run on the strategies
    /// that have one, by this property (`examples/strategies.rs` prints
    /// it for CI's scripts), never by their names.
    const RAW_MODULE: Option<&'static str> = <Self as shard::RawCode>::MODULE;
    /// One NC's storage. Its interface is private to the crate.
    type Shard: shard::Shard + shard::FastPath;
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
