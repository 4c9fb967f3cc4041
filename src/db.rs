//! The interner: `N` per-NC contexts and the public API; the whole-array
//! reads (snapshot, deltas) in `merge.rs`.

use core::fmt;
use core::marker::PhantomData;

use crate::config::Config;
use crate::conflict::Conflict;
use crate::error::Error;
use crate::id::get_id;
use crate::nc::{self, NcContext, NcSlot};
use crate::strategy::shard::{ConflictSink, FastPath, IdSource, Key, Placement, Shard, ShardStats};
use crate::strategy::{DefaultStrategy, Registered, Strategy};
use crate::sync::{self, RwLock};

mod merge;

/// A concurrent string interner with one shard per NeuronCore (NC).
///
/// `S` is the lock [`Strategy`]; see the crate docs for how to choose.
/// All methods take `&self` and may be called from any number of threads,
/// except [`reset`](Self::reset), which needs exclusive access.
pub struct InternedStringDb<S: Strategy = DefaultStrategy> {
    /// Each NC's context, made by the first call that writes to it.
    contexts: Box<[NcSlot<S>]>,
    /// The reference's `GLOBAL_LOCK`: read across the whole-array merge,
    /// write to open or close an NC. Used only by strategies that follow the
    /// reference protocol (`GLOBAL_MERGE_LOCK`).
    global: RwLock<()>,
    config: Config,
    /// Names the contents since construction or the last reset, for
    /// cursors: unique in the process, so a cursor also tells dbs apart.
    generation: u64,
    _strategy: PhantomData<S>,
}

impl InternedStringDb<DefaultStrategy> {
    /// A db with [`DEFAULT_NCS`](crate::DEFAULT_NCS) NCs and the default strategy.
    pub fn new() -> Self {
        Self::with_config(Config::default())
    }
}

impl Default for InternedStringDb<DefaultStrategy> {
    fn default() -> Self {
        Self::new()
    }
}

impl<S: Strategy> fmt::Debug for InternedStringDb<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("InternedStringDb")
            .field("strategy", &S::NAME)
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

impl<S: Strategy> InternedStringDb<S> {
    /// A db built from `config`, with strategy `S`: the convenience form of
    /// [`try_with_config`](Self::try_with_config), for configurations known
    /// to be good.
    ///
    /// # Panics
    ///
    /// Where [`try_with_config`](Self::try_with_config) returns an error: if
    /// `config` asks for zero NCs, or for more NCs or initial capacity than
    /// memory can hold.
    pub fn with_config(config: Config) -> Self {
        Self::try_with_config(config).unwrap_or_else(|e| panic!("{e}"))
    }

    /// A db built from `config`, with strategy `S`, or the reason it cannot
    /// be. Every allocation that grows with the configuration is fallible,
    /// so an absurd configuration is an error, never a panic or an abort.
    ///
    /// ```
    /// use interned_string_db::{Config, Error, InternedStringDb};
    /// let huge = Config::new().ncs(4).initial_capacity(1 << 40);
    /// assert!(matches!(
    ///     InternedStringDb::<interned_string_db::DefaultStrategy>::try_with_config(huge),
    ///     Err(Error::ConfigTooLarge { .. })
    /// ));
    /// ```
    ///
    /// An NC's context is made by the first call that writes to it, so a db
    /// whose NCs see no strings holds a pointer per NC; with an
    /// [`initial_capacity`](Config::initial_capacity) above 0, every NC's
    /// context and first table are made here, so that a capacity the
    /// machine cannot hold is refused now.
    ///
    /// # Errors
    ///
    /// [`Error::ZeroNcs`]; [`Error::ConfigTooLarge`] if the NCs' slots, or
    /// with an initial capacity their contexts and first tables
    /// (`initial_capacity` entries each), cannot be allocated, or if their
    /// tables alone (at least 8 bytes an entry) would take more than the
    /// machine's memory: an allocator that overcommits accepts such a
    /// request, and the process is killed when the tables are written.
    pub fn try_with_config(config: Config) -> Result<Self, Error> {
        if config.ncs == 0 {
            return Err(Error::ZeroNcs);
        }
        let too_large = || Error::ConfigTooLarge {
            ncs: config.ncs,
            initial_capacity: config.initial_capacity,
        };
        if !config.fits_the_machine() {
            return Err(too_large());
        }
        let mut contexts = Vec::new();
        contexts
            .try_reserve_exact(config.ncs)
            .map_err(|_| too_large())?;
        contexts.extend((0..config.ncs).map(|_| NcSlot::new()));
        let db = InternedStringDb {
            contexts: contexts.into_boxed_slice(),
            global: RwLock::new(()),
            config,
            generation: sync::unique_generation(),
            _strategy: PhantomData,
        };
        if db.config.initial_capacity > 0 {
            for nc in 0..db.ncs() {
                db.made_context(nc).map_err(|_| too_large())?;
            }
        }
        Ok(db)
    }

    /// The number of NCs.
    pub fn ncs(&self) -> usize {
        self.contexts.len()
    }

    /// The configuration the db was built with.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The strategy's name.
    pub fn strategy_name(&self) -> &'static str {
        S::NAME
    }

    /// NC `nc`'s context if it was made (`None`: open and empty).
    #[inline]
    pub(crate) fn context(&self, nc: usize) -> Option<&NcContext<S>> {
        self.contexts.get(nc)?.get()
    }

    /// NC `nc`'s slot, or why there is none.
    fn slot(&self, nc: usize) -> Result<&NcSlot<S>, Error> {
        self.contexts.get(nc).ok_or(Error::NcOutOfRange {
            nc,
            ncs: self.contexts.len(),
        })
    }

    /// NC `nc`'s context, made now if no call made it yet: for the calls
    /// that write to the NC.
    pub(crate) fn made_context(&self, nc: usize) -> Result<&NcContext<S>, Error> {
        self.slot(nc)?
            .get_or_try_init(|| NcContext::new(&self.config.shard_config()).ok())
            .ok_or(Error::OutOfMemory { nc, needed: 0 })
    }

    /// The id this db gives `bytes`: [`get_id`] unless a test narrowed it.
    #[inline]
    pub fn id_of(&self, bytes: &[u8]) -> u64 {
        ((get_id(bytes) - 1) & self.config.id_mask) + 1
    }

    /// Interns `s` into NC `nc`'s shard and returns its id.
    ///
    /// Idempotent: interning the same string again returns the same id and
    /// allocates nothing. If the shard already holds the id with a different
    /// string (a collision), the first string is kept, the conflict is
    /// recorded and logged, and the id is still returned. When it is
    /// recorded depends on the strategy
    /// ([`Strategy::FINDS_CONFLICTS_LAZILY`](crate::Strategy::FINDS_CONFLICTS_LAZILY)):
    /// during this call, or, under the default strategy, whose misses never
    /// look an id up, when the NC is next settled: before a snapshot, a
    /// delta, the conflict list or the counters answer (a resolve or a
    /// lookup settles once 64 entries are unsettled, and otherwise finds
    /// the first string by walking them). To know at once, call
    /// [`intern_with_outcome`](Self::intern_with_outcome).
    ///
    /// # Errors
    ///
    /// [`Error::EmptyString`], [`Error::NcOutOfRange`], [`Error::NcClosed`],
    /// [`Error::CapReached`], [`Error::OutOfMemory`]. Nothing is stored on
    /// an error.
    #[inline]
    pub fn intern(&self, nc: usize, s: &str) -> Result<u64, Error> {
        self.intern_bytes(nc, s.as_bytes())
    }

    /// [`intern`](Self::intern) for bytes that need not be UTF-8.
    ///
    /// The store is byte-oriented, as the reference's engine is; only its C
    /// ABI insists on UTF-8.
    #[inline]
    pub fn intern_bytes(&self, nc: usize, bytes: &[u8]) -> Result<u64, Error> {
        // The hit path, inlined into the caller: for the optimistic
        // strategy a fast hash, acquire loads and a compare, returning the
        // stored id. A miss goes down once, out of line.
        let placed = match self.context(nc) {
            Some(ctx) => match ctx.shard.find_hit(bytes) {
                Ok(id) => return Ok(id),
                Err(placed) => placed,
            },
            None => None,
        };
        self.intern_miss(nc, bytes, placed)
    }

    /// [`intern_bytes`](Self::intern_bytes) after its hit path missed,
    /// having learned `placed` (or `nc` is out of range, or not made).
    #[inline(never)]
    fn intern_miss(
        &self,
        nc: usize,
        bytes: &[u8],
        placed: Option<Placement>,
    ) -> Result<u64, Error> {
        self.store(nc, self.key(bytes).placed(placed))
            .map(|(id, _)| id)
    }

    /// [`intern_bytes`](Self::intern_bytes), also saying whether the bytes
    /// were inserted, already present, or in conflict: exact when it
    /// returns, a conflict recorded during the call, under every strategy
    /// (the default one settles the NC's by-id map and looks the id up
    /// under the NC's lock, where a plain intern's miss does neither).
    pub fn intern_with_outcome(&self, nc: usize, bytes: &[u8]) -> Result<(u64, Registered), Error> {
        self.store(nc, self.key(bytes).with_outcome())
    }

    /// Stores `id → bytes` in NC `nc`'s shard, trusting the caller's id (the
    /// C ABI's `register_entry`: the id is not recomputed from the bytes).
    ///
    /// # Errors
    ///
    /// As [`intern`](Self::intern).
    pub fn register(&self, nc: usize, id: u64, bytes: &[u8]) -> Result<Registered, Error> {
        // A caller's id that is the hash (the runtime's own pairing) is
        // stored as an intern would store it, reachable by the hit path.
        let source = if id == self.id_of(bytes) {
            IdSource::Hash
        } else {
            IdSource::Caller
        };
        self.store(nc, Key::with_id(bytes, id, source).with_outcome())
            .map(|(_, outcome)| outcome)
    }

    /// `bytes` under this db's id of them, computed when a shard asks.
    #[inline]
    fn key<'a>(&self, bytes: &'a [u8]) -> Key<'a> {
        Key::hashed(bytes, self.config.id_mask)
    }

    /// Interns `key` into NC `nc`'s shard: one call down to the shard, one
    /// answer back; a refusal is mapped to its error.
    #[inline]
    fn store(&self, nc: usize, key: Key<'_>) -> Result<(u64, Registered), Error> {
        let ctx = match self.context(nc) {
            Some(ctx) => ctx,
            None => self.first_context(nc, key.bytes)?,
        };
        ctx.shard
            .intern(key, self.conflict_sink(ctx, nc))
            .map_err(|refusal| Error::refused(nc, key.bytes, refusal))
    }

    /// The context of an NC no call has written to yet, made for
    /// [`store`](Self::store) of `bytes` (or the error of an NC out of
    /// range): an empty name is refused first, as by every shard, so that
    /// it makes no context.
    #[cold]
    #[inline(never)]
    pub(crate) fn first_context(&self, nc: usize, bytes: &[u8]) -> Result<&NcContext<S>, Error> {
        if bytes.is_empty() {
            return Err(Error::EmptyString);
        }
        self.made_context(nc)
    }

    /// Where NC `nc`'s shard records a conflict: its log, within the db's
    /// budget.
    #[inline]
    pub(crate) fn conflict_sink<'a>(&self, ctx: &'a NcContext<S>, nc: usize) -> ConflictSink<'a> {
        ConflictSink::new(&ctx.conflicts, self.config.conflict_budget, nc)
    }

    /// The id of `s` if NC `nc`'s shard holds exactly `s`; never inserts.
    pub fn lookup(&self, nc: usize, s: &str) -> Option<u64> {
        self.lookup_bytes(nc, s.as_bytes())
    }

    /// [`lookup`](Self::lookup) for bytes.
    ///
    /// Under the optimistic strategy a present name is found as an intern
    /// hit is, without a lock and without computing the id; a name the
    /// lock-free probe does not find is looked up by its id as `resolve`
    /// does, without an exclusive lock.
    pub fn lookup_bytes(&self, nc: usize, bytes: &[u8]) -> Option<u64> {
        let ctx = self.context(nc)?;
        ctx.shard
            .lookup(self.key(bytes), self.conflict_sink(ctx, nc))
    }

    /// Calls `f` with the bytes NC `nc`'s shard stores under `id`, whether
    /// the NC is open or closed.
    ///
    /// `f` runs with no lock of the db held, so it may call back into the
    /// db, the same NC included: intern, close, open, snapshot. The
    /// optimistic strategy passes the stored bytes without copying them;
    /// the lock strategies copy them out first, and arc-swap takes a
    /// reference count.
    pub fn with_resolved<R>(&self, nc: usize, id: u64, f: impl FnOnce(&[u8]) -> R) -> Option<R> {
        let ctx = self.context(nc)?;
        self.resolve_in(ctx, nc, id, f, |shard, f| shard.resolve_unlocked(id, f))
    }

    /// `f` on the bytes that `ctx`, NC `nc`'s context, stores under `id`:
    /// answered from what the shard has settled if that holds `id`, else
    /// by `resolve` (the shard's resolve that suits `f`) after settling as
    /// much as a reader needs.
    fn resolve_in<R, F: FnOnce(&[u8]) -> R>(
        &self,
        ctx: &NcContext<S>,
        nc: usize,
        id: u64,
        f: F,
        resolve: impl FnOnce(&S::Shard, F) -> Option<R>,
    ) -> Option<R> {
        let f = match ctx.shard.resolve_settled(id, f) {
            Ok(found) => return Some(found),
            Err(f) => f,
        };
        ctx.shard.settle_for_reads(self.conflict_sink(ctx, nc));
        resolve(&ctx.shard, f)
    }

    /// A copy of the bytes that `ctx`, NC `nc`'s context, stores under
    /// `id`: made by the shard's own `resolve`, under its lock if it has
    /// one (a copy calls nothing back), so that a lock strategy copies the
    /// bytes once, not out of the lock and then again.
    fn copy_in(&self, ctx: &NcContext<S>, nc: usize, id: u64) -> Option<Box<[u8]>> {
        let copy = |bytes: &[u8]| Box::<[u8]>::from(bytes);
        self.resolve_in(ctx, nc, id, copy, |shard, copy| shard.resolve(id, copy))
    }

    /// A copy of the bytes NC `nc`'s shard stores under `id`.
    pub fn resolve(&self, nc: usize, id: u64) -> Option<Box<[u8]>> {
        let ctx = self.context(nc)?;
        self.copy_in(ctx, nc, id)
    }

    /// The bytes of `id` in the first open NC that holds it: what a
    /// snapshot taken now would map `id` to.
    pub fn resolve_any(&self, id: u64) -> Option<Box<[u8]>> {
        nc::made(&self.contexts)
            .filter(|(_, ctx)| ctx.shard.is_open())
            .find_map(|(nc, ctx)| self.copy_in(ctx, nc, id))
    }

    /// Closes NC `nc`: it refuses new strings with [`Error::NcClosed`] and
    /// snapshots skip it. Its entries are kept, and reappear in snapshots
    /// once it is [opened](Self::open_nc) again.
    ///
    /// # Errors
    ///
    /// [`Error::NcOutOfRange`]; [`Error::OutOfMemory`] if the NC saw no
    /// call before and its context cannot be allocated.
    pub fn close_nc(&self, nc: usize) -> Result<(), Error> {
        self.set_open(nc, false)
    }

    /// Opens NC `nc` again (NCs start open).
    ///
    /// # Errors
    ///
    /// As [`close_nc`](Self::close_nc).
    pub fn open_nc(&self, nc: usize) -> Result<(), Error> {
        self.set_open(nc, true)
    }

    fn set_open(&self, nc: usize, open: bool) -> Result<(), Error> {
        let ctx = self.made_context(nc)?;
        // Under the reference protocol, opening and closing exclude a merge
        // in progress, so a snapshot sees one consistent set of open NCs.
        let _global = <S::Shard as Shard>::GLOBAL_MERGE_LOCK.then(|| sync::write(&self.global));
        ctx.shard.set_open(open);
        Ok(())
    }

    /// Whether NC `nc` is open.
    ///
    /// # Errors
    ///
    /// [`Error::NcOutOfRange`].
    pub fn is_open(&self, nc: usize) -> Result<bool, Error> {
        Ok(self.slot(nc)?.get().is_none_or(|ctx| ctx.shard.is_open()))
    }

    /// The number of entries in NC `nc`'s shard (0 for an NC out of range).
    pub fn nc_len(&self, nc: usize) -> usize {
        self.settled_stats(nc).entries
    }

    /// Bytes of string data stored in NC `nc`'s shard (0 out of range).
    pub fn nc_bytes(&self, nc: usize) -> usize {
        self.settled_stats(nc).bytes
    }

    /// NC `nc`'s counters, after settling it ([`Shard::settle`]: a string
    /// whose id other bytes hold is not counted).
    fn settled_stats(&self, nc: usize) -> ShardStats {
        self.context(nc).map_or(ShardStats::default(), |ctx| {
            ctx.shard.settle(self.conflict_sink(ctx, nc));
            ctx.shard.stats()
        })
    }

    /// Entries summed over every shard, open or closed (a string interned on
    /// two NCs counts twice).
    pub fn total_entries(&self) -> usize {
        self.settle(false);
        nc::totals(&self.contexts).entries
    }

    /// Every conflict recorded in any shard, open or closed, in NC order.
    /// Conflicts between shards are found by [`snapshot`](Self::snapshot).
    pub fn conflicts(&self) -> Vec<Conflict> {
        self.settle(false);
        let mut all = Vec::new();
        for (_, ctx) in nc::made(&self.contexts) {
            ctx.conflicts.for_each(|c| {
                all.push(Conflict {
                    id: c.id,
                    kept: c.kept.into(),
                    rejected: c.rejected.into(),
                });
            });
        }
        all
    }

    /// How many distinct conflicts the shards have recorded.
    pub fn conflict_count(&self) -> usize {
        self.settle(false);
        nc::made(&self.contexts)
            .map(|(_, ctx)| ctx.conflicts.len())
            .sum()
    }

    /// How many conflicts any shard, open or closed, counted without storing
    /// them because its [conflict budget](Config::conflict_budget) was spent
    /// or memory to store them was refused (a repeat of a dropped conflict
    /// counts again). Non-zero means that
    /// [`conflicts`](Self::conflicts) is incomplete: many strings contest
    /// some id, which for names from untrusted input may be deliberate.
    pub fn conflicts_dropped(&self) -> u64 {
        nc::made(&self.contexts)
            .map(|(_, ctx)| ctx.conflicts.dropped())
            .sum()
    }

    /// Frees every entry and conflict of every NC and reopens them all.
    /// Exclusive access makes this free of races by construction.
    ///
    /// Every NC's context is freed, and made again (with its first table,
    /// under an [`initial_capacity`](Config::initial_capacity)) by the next
    /// call that writes to the NC.
    pub fn reset(&mut self) {
        self.generation = sync::unique_generation();
        for slot in self.contexts.iter_mut() {
            drop(slot.take());
        }
    }
}
