//! The shard interface. The module is private, so its items are
//! nameable only inside the crate: the strategy trait is sealed and
//! nothing here is public API.
//!
//! [`Shard`] is what every strategy implements: intern, lookup,
//! resolve, walk, and the NC's open flag and counters. [`FastPath`] is
//! the optional fast paths: a hit found without blocking (which a
//! caller inlines), and `intern_batch`'s lookups and misses; none, and
//! one by one, unless a strategy overrides them.

use super::Registered;
use crate::conflict::ConflictLog;
use crate::id::get_id_inlined;

/// Implemented by the strategies this crate ships, and only by them.
pub trait Sealed {}

/// [`Strategy::RAW_MODULE`](super::Strategy::RAW_MODULE)'s value,
/// implemented for every strategy beside the list, in the parent module.
pub trait RawCode {
    /// The strategy's module of `src/raw/`, if it has one.
    const MODULE: Option<&'static str>;
}

/// Limits a shard is built with.
#[derive(Debug, Clone, Copy)]
pub struct ShardConfig {
    /// Bytes of string data the shard may hold; `usize::MAX` for no cap.
    pub byte_cap: usize,
    /// Entries the shard can hold before it first grows.
    pub initial_capacity: usize,
    /// Slabs of log the shard may have, for a strategy whose storage is
    /// slabs ([`OptimisticStrategy::MAX_SLABS`](crate::OptimisticStrategy::MAX_SLABS)
    /// at most); `usize::MAX` for the most it can address.
    pub slab_limit: usize,
}

/// Why a shard refused an insert.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// The name is empty, which no shard stores.
    EmptyName,
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
    /// The shard holds as many slabs of strings as it may
    /// ([`Config::slab_limit`](crate::Config::slab_limit)).
    SlabsExhausted {
        /// The limit reached.
        slabs: usize,
    },
}

/// Where a [`Key`]'s id comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IdSource {
    /// The db's id of the bytes (`intern`, or a caller's id that
    /// happens to be the hash): a hit path keyed by the bytes may find
    /// the entry.
    Hash,
    /// A caller's id that is not the hash (`register`, the C ABI).
    Caller,
}

/// A name to intern, and its id: the db's id of the bytes, computed
/// only when a shard asks ([`id`](Self::id): a hit of the optimistic
/// shard never does), or one already known. Plain fields, so that a
/// hit path inlined into its caller keeps them in registers.
#[derive(Debug, Clone, Copy)]
pub struct Key<'a> {
    /// The name.
    pub bytes: &'a [u8],
    /// The id if `known`; otherwise the mask the db narrows ids by.
    id_or_mask: u64,
    known: bool,
    source: IdSource,
    /// Whether the caller reads the [`Registered`] outcome
    /// (`intern_with_outcome`, `register`): then a shard that finds
    /// conflicts lazily (the optimistic one) must look the id up now.
    outcome: bool,
    /// What [`FastPath::find_hit`] learned of the bytes when it missed
    /// (the optimistic shard: their placement), so the miss need not
    /// work it out again.
    placed: Option<Placement>,
}

/// What [`FastPath::find_hit`] learned of the bytes when it did not
/// return their id: their placement in the shard (the optimistic
/// shard's bytes' hash), and whether it probed for them (`false`: a
/// miss was predicted, and the probe left to the miss path).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Placement {
    /// The bytes' placement.
    pub hash: u64,
    /// Whether the lock-free probe ran and missed.
    pub probed: bool,
}

impl<'a> Key<'a> {
    /// `bytes` under the db's id of them, narrowed by `mask` (the db's
    /// [`id_mask`](crate::Config)).
    #[inline]
    pub fn hashed(bytes: &'a [u8], mask: u64) -> Self {
        Key {
            bytes,
            id_or_mask: mask,
            known: false,
            source: IdSource::Hash,
            outcome: false,
            placed: None,
        }
    }

    /// `bytes` under `id`, which `source` says is or is not the db's id
    /// of them.
    #[inline]
    pub fn with_id(bytes: &'a [u8], id: u64, source: IdSource) -> Self {
        Key {
            bytes,
            id_or_mask: id,
            known: true,
            source,
            outcome: false,
            placed: None,
        }
    }

    /// This key, for a caller that reads the outcome: whether the
    /// bytes were inserted, present or in conflict must be exact when
    /// the intern returns.
    #[inline]
    pub fn with_outcome(self) -> Self {
        Key {
            outcome: true,
            ..self
        }
    }

    /// Whether the caller reads the outcome ([`with_outcome`](Self::with_outcome)).
    #[inline]
    pub fn wants_outcome(&self) -> bool {
        self.outcome
    }

    /// This key, with what [`FastPath::find_hit`] learned when it
    /// missed.
    #[inline]
    pub fn placed(self, placed: Option<Placement>) -> Self {
        Key { placed, ..self }
    }

    /// What [`FastPath::find_hit`] learned when it missed, if it ran.
    #[inline]
    pub fn placement(&self) -> Option<Placement> {
        self.placed
    }

    /// Whether the id is the db's id of the bytes.
    #[inline]
    pub fn source(&self) -> IdSource {
        self.source
    }

    /// The id, or `EmptyName`: no shard stores the empty name. Always
    /// inlined: the miss paths that compute it are few, and SipHash with
    /// its constant key folds where it is inlined.
    #[inline(always)]
    pub fn id(&self) -> Result<u64, Refusal> {
        if self.bytes.is_empty() {
            return Err(Refusal::EmptyName);
        }
        Ok(if self.known {
            self.id_or_mask
        } else {
            ((get_id_inlined(self.bytes) - 1) & self.id_or_mask) + 1
        })
    }
}

impl Default for Key<'_> {
    fn default() -> Self {
        Key::with_id(&[], 0, IdSource::Hash)
    }
}

/// Where a shard records a conflict (one id, other bytes): its NC's
/// conflict log, within the db's budget.
#[derive(Debug, Clone, Copy)]
pub struct ConflictSink<'a> {
    log: &'a ConflictLog,
    budget: usize,
    nc: usize,
}

impl<'a> ConflictSink<'a> {
    /// NC `nc`'s `log`, charged within `budget` bytes.
    #[inline]
    pub(crate) fn new(log: &'a ConflictLog, budget: usize, nc: usize) -> Self {
        ConflictSink { log, budget, nc }
    }

    /// Records that `id`, held as `kept`, was asked for `rejected`.
    pub(crate) fn record(&self, id: u64, kept: &[u8], rejected: &[u8]) {
        self.log.record(self.budget, self.nc, id, kept, rejected);
    }
}

/// What [`Shard::intern`] answers: the key's id and what interning it
/// did, or why the shard refused it.
pub(crate) type Interned = Result<(u64, Registered), Refusal>;

/// What [`FastPath::intern_misses`] answers: all interned, or the index of
/// the first refused and why.
pub(crate) type Misses = Result<(), (usize, Refusal)>;

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
    const GLOBAL_MERGE_LOCK: bool = false;

    /// The alignment of the NC's context that holds the shard (its
    /// first field): [`LineAligned`] for a shard whose first fields are
    /// the line every hit reads, `()` for the others, whose contexts
    /// then take no padding for it. (A zero-length array of it sets the
    /// context's alignment, `crate::nc::NcContext`.)
    type ContextAlign: Send + Sync + 'static;

    /// An empty, open shard, with room for `config.initial_capacity`
    /// entries allocated fallibly: `Err(OutOfMemory)` if it cannot be.
    fn new(config: &ShardConfig) -> Result<Self, Refusal>;

    /// Interns `key`: its id, and whether it was inserted, already
    /// present, or in conflict with other bytes under its id (recorded
    /// in `conflicts` where the reference logs: for lock strategies,
    /// under the lock). Refusals come in the order empty name, closed,
    /// cap, memory. The outcome is exact if the key
    /// [wants it](Key::wants_outcome); otherwise a shard that finds
    /// conflicts lazily may answer `Inserted` for bytes whose id other
    /// bytes hold, and record that conflict when it next
    /// [settles](Self::settle).
    fn intern(&self, key: Key<'_>, conflicts: ConflictSink<'_>) -> Interned;

    /// Brings what the shard finds conflicts with lazily up to date,
    /// recording in `conflicts` those it finds: the db calls it before
    /// it reads the by-id direction (resolve, walks for snapshots and
    /// deltas, the conflict list). Nothing to do, the default, for a
    /// shard that finds conflicts when it interns.
    #[inline]
    fn settle(&self, conflicts: ConflictSink<'_>) {
        let _ = conflicts;
    }

    /// [`settle`](Self::settle), as much as a reader needs (`resolve`,
    /// `with_resolved`, `resolve_any`): a shard may leave the last few
    /// entries unsettled, which its reads walk instead. Nothing to do,
    /// the default, for a shard that finds conflicts when it interns.
    #[inline]
    fn settle_for_reads(&self, conflicts: ConflictSink<'_>) {
        let _ = conflicts;
    }

    /// The id of `key` if the shard, open or closed, holds exactly its
    /// bytes under it; never inserts. `conflicts`: as for
    /// [`settle`](Self::settle), which a lookup may need.
    fn lookup(&self, key: Key<'_>, conflicts: ConflictSink<'_>) -> Option<u64> {
        let _ = conflicts;
        lookup_by_id(self, key)
    }

    /// Calls `f` with the bytes stored under `id`, if any. `f` may run
    /// under a lock of the shard: it must not call back into the db.
    fn resolve<R>(&self, id: u64, f: impl FnOnce(&[u8]) -> R) -> Option<R>;

    /// [`resolve_unlocked`](Self::resolve_unlocked) from what the shard
    /// has settled, without settling it: `Ok` of what `f` returns if the
    /// settled part holds `id`, whose answer nothing interned since can
    /// change (the first string of an id wins), else `Err(f)`, for the
    /// caller to [`settle_for_reads`](Self::settle_for_reads) and resolve.
    /// `f` runs with no lock of the shard held. The default answers
    /// `Err(f)`: a shard that finds conflicts when it interns has nothing
    /// to settle, and its `resolve` answers at once.
    #[inline]
    fn resolve_settled<R, F: FnOnce(&[u8]) -> R>(&self, id: u64, f: F) -> Result<R, F> {
        let _ = id;
        Err(f)
    }

    /// [`resolve`](Self::resolve) for a caller's callback, which may
    /// call back into the db, the same NC included (intern, close,
    /// open): `f` runs with no lock of the shard held. The default
    /// copies the bytes out first; a strategy whose `resolve` holds no
    /// lock while `f` runs, or can take a reference count, overrides it.
    #[inline]
    fn resolve_unlocked<R>(&self, id: u64, f: impl FnOnce(&[u8]) -> R) -> Option<R> {
        self.resolve(id, |stored| Box::<[u8]>::from(stored))
            .map(|bytes| f(&bytes))
    }

    /// If the shard is open, calls `f` once on every entry inserted
    /// since position `from` (0, the start, or a position a walk of
    /// this shard returned) and returns `Some(the position after
    /// them)`; returns `None` for a closed shard, visiting nothing. The
    /// open check and the walk are one critical section, so a shard is
    /// walked wholly or not at all. Positions grow as entries are
    /// inserted; the order of the entries within one walk is the
    /// strategy's (the optimistic log's newest come first within a
    /// slab).
    fn walk(&self, from: usize, f: impl FnMut(u64, &[u8])) -> Option<usize>;

    /// Opens or closes the shard. Closing keeps the entries.
    fn set_open(&self, open: bool);

    /// Whether the shard is open.
    fn is_open(&self) -> bool;

    /// Entries and bytes stored.
    fn stats(&self) -> ShardStats;
}

/// [`Shard::lookup`] by the key's id: whether the shard stores exactly
/// its bytes under it.
pub(crate) fn lookup_by_id(shard: &impl Shard, key: Key<'_>) -> Option<u64> {
    let id = key.id().ok()?;
    shard
        .resolve(id, |stored| stored == key.bytes)?
        .then_some(id)
}

/// The fast paths. The defaults find nothing without a lock and intern
/// a batch's misses one by one; a strategy with a lock-free hit path,
/// or that can overlap the lookups' cache misses, or take its lock once
/// for many misses, overrides them.
pub trait FastPath: Shard {
    /// The id of `bytes` if the shard is open and holds exactly them
    /// under the db's id of them, found without blocking (and, where
    /// the strategy can, without computing the id); otherwise what the
    /// probe learned, for [`Key::placed`]. The caller's hit path: the
    /// db inlines it, and sends a miss down once, through
    /// [`Shard::intern`].
    #[inline]
    fn find_hit(&self, bytes: &[u8]) -> Result<u64, Option<Placement>> {
        let _ = bytes;
        Err(None)
    }

    /// The id of each of `names` that the shard finds open and holding
    /// it under the db's id of its bytes, without blocking, or `0`,
    /// into `ids` (of the same length).
    #[inline]
    fn find_hits<B: AsRef<[u8]>>(&self, names: &[B], ids: &mut [u64]) {
        let _ = names;
        ids.fill(0);
    }

    /// [`intern`](Shard::intern) of each of `misses` (non-empty names
    /// under the db's id of them, which the batch's lookups missed), in
    /// order. Stops at the first refusal, with its index: the misses
    /// before it are interned, none after it.
    fn intern_misses(&self, misses: &[Key<'_>], conflicts: ConflictSink<'_>) -> Misses {
        for (at, key) in misses.iter().enumerate() {
            self.intern(*key, conflicts)
                .map_err(|refusal| (at, refusal))?;
        }
        Ok(())
    }
}
