//! The optimistic strategy's miss path: the NC's writer lock (and the move
//! to stripes that contention makes), the probe under it, which is exact,
//! and the insert; out of line from the hit path, which the db inlines.
//!
//! A miss predicted without the lock-free probe ([`miss_run`]) takes the
//! lock without waiting first, and probes lock-free where it would wait.

use super::super::admission::{check_cap, compare};
use super::super::shard::{ConflictSink, IdSource, Interned, Key, Placement, Refusal};
use super::super::stripes::Stripes;
use super::super::Registered;
use super::{miss_run, OptimisticShard};
use crate::raw::{AppendError, ByBytes, StripedShard, WriteGuard, MAX_SLABS};

impl<const STRIPED_AFTER: usize> OptimisticShard<STRIPED_AFTER> {
    /// The writer lock of `raw`; if another thread held it, the NC first
    /// moves to stripes (under the lock, so once), unless it is closed or
    /// has a limit that is one log's. Inlined into the miss path: the
    /// contended case is out of line.
    #[inline(always)]
    pub(super) fn write_or_stripe(&self) -> WriteGuard<'_> {
        match self.raw.try_write() {
            Some(writer) => self.stripe_after(writer),
            None => self.write_contended(),
        }
    }

    /// [`write_or_stripe`](Self::write_or_stripe) for a miss predicted
    /// without the lock-free probe ([`miss_run`]): if another thread holds
    /// the lock, or if the NC is due to move to stripes at this size, the
    /// probe runs first, so that a hit never waits for the lock nor moves
    /// the NC (which allocates its stripes) (`Err` of the id found).
    #[inline(always)]
    fn write_predicted(&self, bytes: &[u8]) -> Result<WriteGuard<'_>, u64> {
        match self.raw.try_write() {
            Some(writer) => {
                if self.stripes_due() {
                    // Under the lock the probe is exact.
                    if let Some(id) = self.probe_skipped(bytes) {
                        return Err(id);
                    }
                    self.move_to_stripes(&writer);
                }
                Ok(writer)
            }
            None => match self.probe_skipped(bytes) {
                Some(id) => Err(id),
                None => Ok(self.write_contended()),
            },
        }
    }

    /// `writer`, taken without a wait, after the NC moved to stripes if it
    /// holds `STRIPED_AFTER` entries.
    #[inline(always)]
    fn stripe_after<'w>(&self, writer: WriteGuard<'w>) -> WriteGuard<'w> {
        if self.stripes_due() {
            self.move_to_stripes(&writer);
        }
        writer
    }

    /// Whether the NC holds the `STRIPED_AFTER` entries past which it
    /// moves to stripes at its next miss (never for the default).
    #[inline(always)]
    fn stripes_due(&self) -> bool {
        STRIPED_AFTER != usize::MAX && self.raw.len() >= STRIPED_AFTER
    }

    /// The lock-free probe that a predicted miss skipped ([`miss_run`]),
    /// run where its miss path would otherwise wait for a lock: the id of
    /// the bytes if the NC holds them.
    #[cold]
    #[inline(never)]
    fn probe_skipped(&self, bytes: &[u8]) -> Option<u64> {
        let (hash, probe) = self.raw.placement(bytes);
        self.find_placed(hash, probe).map(|entry| entry.id())
    }

    /// [`write_or_stripe`](Self::write_or_stripe) when another thread held
    /// the lock.
    #[cold]
    #[inline(never)]
    fn write_contended(&self) -> WriteGuard<'_> {
        let writer = self.raw.write();
        self.move_to_stripes(&writer);
        writer
    }

    /// Makes the NC's stripes, `writer` held.
    #[cold]
    #[inline(never)]
    pub(super) fn move_to_stripes(&self, writer: &WriteGuard<'_>) {
        let limited = self.raw.byte_cap() != usize::MAX || writer.slab_limit() != MAX_SLABS;
        if limited || !self.raw.is_open() {
            return;
        }
        // Open: a close takes the lock held here, and closes the stripes
        // too once they exist. On an allocation failure the NC stays on
        // one lock, and a later contended miss tries again.
        let _ = self
            .stripes
            .get_or_try_init(|| StripedShard::try_new_after(&self.raw).ok());
    }
}

/// The miss path, out of line so the hit path stays small: the id (outside
/// the lock), then the NC's writer lock, a re-check (by the bytes, exact
/// under the lock: another thread may have inserted, or a split may have
/// hidden the entry from a lock-free probe; by the id, after settling, if
/// the caller reads the outcome or chose the id), then the insert.
/// `placed` is the bytes' hash
/// ([`RawShard::bytes_hash`](crate::raw::RawShard::bytes_hash)) if the hit
/// path computed it, and whether it probed for them: a miss predicted
/// without the probe ([`miss_run`]) probes lock-free before any wait for a
/// lock.
/// An insert into an NC that has not moved extends the thread's run of
/// inserts; a name found under the lock ends it.
///
/// Inlined, with everything under the lock down to the append and the
/// table insert (`register_locked`, `insert_hashed`, `Log::append`,
/// `Table::insert_reserved`; a split stays out of line): the db's own miss
/// path (`InternedStringDb::intern_miss`) is already out of line, and the
/// five calls' prologues and moved arguments were 127 of 1,004
/// instructions an insert (callgrind, `fill`, 10^5 names; 877 inlined).
#[inline(always)]
pub(super) fn intern_miss<const STRIPED_AFTER: usize>(
    shard: &OptimisticShard<STRIPED_AFTER>,
    key: Key<'_>,
    placed: Option<Placement>,
    conflicts: ConflictSink<'_>,
) -> Interned {
    if let Some(stripes) = shard.stripes.get() {
        return intern_in_stripes(shard, stripes, key, placed, conflicts);
    }
    let predicted = placed.is_some_and(|placed| !placed.probed);
    let hash = placed.map(|placed| placed.hash);
    let id = key.id()?;
    // Indexed by its bytes too if `id` is the db's id of them.
    let by_bytes = (key.source() == IdSource::Hash)
        .then(|| hash.unwrap_or_else(|| shard.raw.bytes_hash(key.bytes)));
    let mut writer = if predicted {
        match shard.write_predicted(key.bytes) {
            Ok(writer) => writer,
            Err(id) => {
                miss_run::end();
                return Ok((id, Registered::AlreadyPresent));
            }
        }
    } else {
        shard.write_or_stripe()
    };
    if let Some(stripes) = shard.stripes.get() {
        // Moved to stripes, by this thread or while it waited.
        drop(writer);
        return intern_in_stripes(shard, stripes, key, placed, conflicts);
    }
    if !shard.raw.is_open() {
        return Err(Refusal::Closed);
    }
    let outcome = looks_id_up(shard, key);
    let registered = register_locked(
        shard,
        &mut writer,
        id,
        key.bytes,
        by_bytes,
        outcome,
        predicted,
        conflicts,
    )?;
    drop(writer);
    match registered {
        Registered::Inserted => miss_run::inserted(),
        _ => miss_run::end(),
    }
    Ok((id, registered))
}

/// [`Stripes::intern`], out of line: inlined, its code pushed SipHash and
/// the probe under the lock out of the single-lock miss path ([`intern_miss`]),
/// 808 → 964 instructions an insert (callgrind, `fill`, 10^5 names). A
/// miss predicted ([`miss_run`]: `placed` not probed) did not probe the
/// stripe lock-free. An insert extends the thread's run of inserts, a name
/// found ends it, as on one lock.
#[inline(never)]
fn intern_in_stripes<const STRIPED_AFTER: usize>(
    shard: &OptimisticShard<STRIPED_AFTER>,
    stripes: &StripedShard,
    key: Key<'_>,
    placed: Option<Placement>,
    conflicts: ConflictSink<'_>,
) -> Interned {
    let stripes = Stripes {
        stripes,
        base: &shard.raw,
    };
    let predicted = placed.is_some_and(|placed| !placed.probed);
    let hash = placed.map(|placed| placed.hash);
    let (id, registered) = stripes.intern(key, hash, predicted, conflicts)?;
    match registered {
        Registered::Inserted => miss_run::inserted(),
        _ => miss_run::end(),
    }
    Ok((id, registered))
}

/// Whether the miss of `key` must look its id up before it inserts: when
/// the caller reads the outcome, and in an NC with a byte cap, so that
/// bytes whose id other bytes hold are never charged to the cap (as under
/// the reference protocol, which stores nothing for them).
#[inline]
pub(super) fn looks_id_up<const STRIPED_AFTER: usize>(
    shard: &OptimisticShard<STRIPED_AFTER>,
    key: Key<'_>,
) -> bool {
    key.wants_outcome() || shard.raw.byte_cap() != usize::MAX
}

/// [`intern_miss`] under the writer lock, the shard open. `by_bytes` is the
/// bytes' hash if `id` is the db's id of `bytes`, so that the entry is
/// found and indexed by its bytes; then, unless `outcome` asks for the id
/// to be looked up, an entry under the id with other bytes is left for the
/// next settle to find. A caller's id (no `by_bytes`) is always looked up.
/// A `predicted` miss ([`miss_run`]: no lock-free probe loaded the bucket's
/// line, which the hit path prefetched) appends before it probes
/// ([`WriteGuard::insert_unless_found`]).
/// Inlined into the miss path ([`intern_miss`]).
#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub(super) fn register_locked<const STRIPED_AFTER: usize>(
    shard: &OptimisticShard<STRIPED_AFTER>,
    writer: &mut WriteGuard<'_>,
    id: u64,
    bytes: &[u8],
    by_bytes: Option<u64>,
    outcome: bool,
    predicted: bool,
    conflicts: ConflictSink<'_>,
) -> Result<Registered, Refusal> {
    if let (Some(hash), false, true) = (by_bytes, outcome, predicted) {
        // No cap to charge: an NC with one looks ids up (`outcome`).
        debug_assert_eq!(shard.raw.byte_cap(), usize::MAX);
        return match writer.insert_unless_found(id, bytes, hash, WriteGuard::UNNUMBERED) {
            Ok(Ok(_)) => Ok(Registered::Inserted),
            Ok(Err(_)) => Ok(Registered::AlreadyPresent),
            Err(refused) => Err(refusal(refused, writer)),
        };
    }
    let mut index = by_bytes.map(ByBytes::hash);
    match by_bytes {
        Some(hash) if !outcome => match writer.find_by_hash(hash, bytes) {
            Ok(_) => return Ok(Registered::AlreadyPresent),
            // Where the word goes, found on the probe's walk.
            Err(missed) => index = Some(missed),
        },
        // Whether present or not, another string may hold the id first.
        _ => {
            let record = |id, kept: &[u8], rejected: &[u8]| conflicts.record(id, kept, rejected);
            let found = writer
                .find_by_id(id, record)
                .map_err(|_| Refusal::OutOfMemory)?;
            if let Some(entry) = found {
                return Ok(compare(entry.bytes(), bytes, id, conflicts));
            }
        }
    }
    check_cap(writer.bytes(), shard.raw.byte_cap(), bytes.len())?;
    writer
        .insert_hashed(id, bytes, index, None)
        .map_err(|refused| refusal(refused, writer))?;
    Ok(Registered::Inserted)
}

/// The refusal of an append that `writer`'s log refused.
#[cold]
fn refusal(refused: AppendError, writer: &WriteGuard<'_>) -> Refusal {
    match refused {
        AppendError::OutOfMemory => Refusal::OutOfMemory,
        AppendError::Full => Refusal::SlabsExhausted {
            slabs: writer.slab_limit(),
        },
    }
}
