//! A shard's writer side: the writer lock's guard, through which every
//! insert, lookup by id under the lock, open and close goes (the parent
//! module's protocol: misses probe again under the lock, append, and index
//! by bytes; nothing else).

use super::{RawShard, Writer};
use crate::raw::alloc::{try_box, AllocError};
use crate::raw::bytes::bytes_eq;
use crate::raw::optimistic::blocks::TableWriter;
use crate::raw::optimistic::by_id::IdSide;
use crate::raw::optimistic::log::{AppendError, LogWriter, Ref, MAX_SLABS};
use crate::raw::optimistic::record::Entry;
use crate::raw::optimistic::table::Vacancy;
use crate::sync::{self, MutexGuard, Ordering};

/// The shard's writer lock, held: the only way to insert, find by id, open
/// or close.
pub(crate) struct WriteGuard<'a> {
    pub(super) shard: &'a RawShard,
    pub(super) writer: MutexGuard<'a, Option<Box<Writer>>>,
}

/// How a new entry is indexed by its bytes ([`WriteGuard::insert_hashed`]):
/// their hash ([`RawShard::bytes_hash`]), and where its word goes if the
/// writer's probe found that under the lock ([`WriteGuard::find_by_hash`]).
#[derive(Clone, Copy)]
pub(crate) struct ByBytes<'a> {
    hash: u64,
    vacancy: Option<Vacancy<'a>>,
}

impl ByBytes<'_> {
    /// Indexed by the bytes of hash `hash`, their word placed by a walk of
    /// its own.
    pub(crate) fn hash(hash: u64) -> Self {
        ByBytes {
            hash,
            vacancy: None,
        }
    }
}

impl<'a> WriteGuard<'a> {
    /// The entry holding exactly `bytes` (of hash `hash`,
    /// [`RawShard::bytes_hash`]) in the by-bytes table, found under the
    /// lock, where the probe is exact: `Err` of how to index the bytes if
    /// none does, with where their word goes, found on the same walk. (It
    /// holds until the table changes: only the guard's holder changes it.)
    #[inline(always)]
    pub(crate) fn find_by_hash(&self, hash: u64, bytes: &[u8]) -> Result<Entry<'a>, ByBytes<'a>> {
        let shard: &'a RawShard = self.shard;
        debug_assert_eq!(hash, shard.bytes_hash(bytes));
        let log = &shard.hot.log;
        shard
            .hot
            .table
            .find_map_or_vacancy(hash, |at| {
                // SAFETY: a ref from a slot word stored under the lock that
                // the guard holds, after its record was appended: the lock's
                // acquire made both visible to this thread.
                let entry = unsafe { log.entry(at) };
                bytes_eq(entry.bytes(), bytes).then_some(entry)
            })
            .map_err(|vacancy| ByBytes { hash, vacancy })
    }

    /// The entry that holds `id` first, after settling the by-id map
    /// ([`RawShard::settle`], `conflict` as there): exact, since no entry
    /// is appended while the guard is held.
    pub(crate) fn find_by_id(
        &mut self,
        id: u64,
        conflict: impl FnMut(u64, &[u8], &[u8]),
    ) -> Result<Option<Entry<'a>>, AllocError> {
        let shard = self.shard;
        shard.settle(conflict)?;
        // SAFETY: under the writer lock.
        let Some(side) = (unsafe { shard.id_side() }) else {
            return Ok(None);
        };
        let log = &shard.hot.log;
        let at = sync::read(&side.map).get(log, id, shard.id_hash(id));
        // SAFETY: a ref to the writer's own published record; entries live
        // as long as the shard.
        Ok(at.map(|at| unsafe { log.entry(at) }))
    }

    /// Bytes of string data stored.
    #[inline]
    pub(crate) fn bytes(&self) -> usize {
        self.shard.bytes()
    }

    /// The most slabs the log may have ([`RawShard::try_new`]).
    pub(crate) fn slab_limit(&self) -> usize {
        self.writer
            .as_ref()
            .map_or(MAX_SLABS, |writer| writer.log.slab_limit())
    }

    /// The writer's state, made on first use.
    #[inline]
    pub(super) fn writer_mut(&mut self) -> Result<&mut Writer, AllocError> {
        if self.writer.is_none() {
            self.make_writer()?;
        }
        Ok(self.writer.as_mut().expect("made above"))
    }

    /// [`writer_mut`](Self::writer_mut)'s first call.
    #[cold]
    #[inline(never)]
    fn make_writer(&mut self) -> Result<(), AllocError> {
        let fresh = Writer {
            log: LogWriter::default(),
            table: TableWriter::default(),
        };
        *self.writer = Some(try_box(fresh).ok_or(AllocError)?);
        Ok(())
    }

    /// Opens or closes the shard.
    pub(crate) fn set_open(&mut self, open: bool) {
        self.shard.hot.open.store(open, Ordering::Release);
    }

    /// [`insert_hashed`](Self::insert_hashed), indexing by the bytes if
    /// `id_is_hash` (the tests' form).
    #[cfg(test)]
    pub(crate) fn insert(
        &mut self,
        id: u64,
        bytes: &[u8],
        id_is_hash: bool,
    ) -> Result<(), AppendError> {
        let by_bytes = id_is_hash.then(|| ByBytes::hash(self.shard.bytes_hash(bytes)));
        self.insert_hashed(id, bytes, by_bytes, None).map(drop)
    }

    /// Appends `id → bytes` and, if `by_bytes` gives the bytes' hash
    /// ([`ByBytes`], which the caller passes when `id` is the db's id of
    /// `bytes`), indexes it by its bytes. The caller checked
    /// that the by-bytes table does not hold `bytes` (a miss), or, for a
    /// synchronous outcome, that no entry holds `id`
    /// ([`find_by_id`](Self::find_by_id)); an entry whose id an earlier
    /// one holds is found when the by-id map is next settled. `number`,
    /// if given, is written into the record ([`striped`](super::striped)).
    /// Returns where the record is. On a refusal
    /// (memory, or a log with no slab left: [`AppendError`]) the shard is
    /// unchanged (what the index needs is allocated first). Inlined into
    /// the miss path, as what it calls per insert is.
    #[inline(always)]
    pub(crate) fn insert_hashed(
        &mut self,
        id: u64,
        bytes: &[u8],
        by_bytes: Option<ByBytes<'a>>,
        number: Option<u32>,
    ) -> Result<Ref, AppendError> {
        debug_assert!(by_bytes.is_none_or(|by| by.hash == self.shard.bytes_hash(bytes)));
        let shard = self.shard;
        let writer = self.prepare(by_bytes.is_some())?;
        let at = shard.hot.log.append(&mut writer.log, id, bytes, number)?;
        Self::publish_indexed(shard, writer, at, bytes.len(), by_bytes);
        Ok(at)
    }

    /// [`insert_unless_found`](Self::insert_unless_found)'s `number` for
    /// an unnumbered record.
    pub(crate) const UNNUMBERED: Option<fn() -> u32> = None;

    /// A predicted miss's insert (the optimistic strategy's `miss_run`):
    /// [`find_by_hash`](Self::find_by_hash), then
    /// [`insert_hashed`](Self::insert_hashed) of `id → bytes` indexed by
    /// their hash `hash` if the table does not hold them, but with the
    /// append first, when the newest slab has room for it
    /// ([`LogWriter::mark_before`]) and the table's needs are in hand
    /// without allocating (`Table::reserve_in_hand`): the record's lines
    /// are written while the bucket's line, which the caller prefetched,
    /// is still on its way, instead of after it arrived. The record is numbered if `number` is
    /// given: it is called once, just before the append (first, or after
    /// a probe that missed), and not at all if a probe first finds the
    /// bytes. If the table holds the bytes after all, the append is taken
    /// back ([`Log::take_back`](crate::raw::optimistic::log::Log::take_back):
    /// it was never published; a number it took is spent) and `Ok(Err)`
    /// names the entry found. A refusal ([`AppendError`]) is the insert's:
    /// the table does not hold the bytes, and the shard is unchanged.
    #[inline(always)]
    pub(crate) fn insert_unless_found<N: FnOnce() -> u32>(
        &mut self,
        id: u64,
        bytes: &[u8],
        hash: u64,
        number: Option<N>,
    ) -> Result<Result<Ref, Entry<'a>>, AppendError> {
        let shard = self.shard;
        // A writer with a slab has made the by-id side: only the table may
        // lack its directory or a spare. Without room in the slab, or if
        // the table's needs are not in hand without allocating, the probe
        // goes first, and only a miss allocates (`insert_hashed`): the
        // prediction may be wrong, and a hit allocates nothing (the first
        // hit after a run of inserts once took a new pool of spares when
        // the last insert had linked the last one).
        let numbered = number.is_some();
        let room = match self.writer.as_deref_mut() {
            Some(writer) => match writer.log.mark_before(id, bytes.len(), numbered) {
                Some(mark) if shard.hot.table.reserve_in_hand(&mut writer.table) => Some(mark),
                _ => None,
            },
            None => None,
        };
        let Some(mark) = room else {
            return match self.find_by_hash(hash, bytes) {
                Ok(entry) => Ok(Err(entry)),
                Err(by) => {
                    let number = number.map(|take| take());
                    self.insert_hashed(id, bytes, Some(by), number).map(Ok)
                }
            };
        };
        debug_assert!(!shard.hot.ids.load(Ordering::Relaxed).is_null());
        let number = number.map(|take| take());
        let writer = self.writer.as_mut().expect("marked above");
        let at = shard
            .hot
            .log
            .append_marked(&mut writer.log, mark, id, bytes, number);
        let found = self.find_by_hash(hash, bytes);
        let writer = self.writer.as_mut().expect("made above");
        match found {
            Ok(entry) => {
                shard.hot.log.take_back(&mut writer.log, mark);
                Ok(Err(entry))
            }
            Err(by) => {
                Self::publish_indexed(shard, writer, at, bytes.len(), Some(by));
                Ok(Ok(at))
            }
        }
    }

    /// The writer's state before an append: made on first use, with the
    /// by-id side, and the table's spares stocked if the entry is to be
    /// `indexed` by its bytes. On a refusal the shard is unchanged.
    #[inline(always)]
    fn prepare(&mut self, indexed: bool) -> Result<&mut Writer, AllocError> {
        let shard = self.shard;
        self.writer_mut()?;
        if shard.hot.ids.load(Ordering::Relaxed).is_null() {
            self.make_id_side()?;
        }
        let writer = self.writer.as_mut().expect("made above");
        if indexed {
            shard.reserve_table(writer)?;
        }
        Ok(writer)
    }

    /// Counts the record appended at `at` (of `len` bytes of string),
    /// publishes it to walks, then indexes it by its bytes if `by_bytes`.
    #[inline(always)]
    fn publish_indexed(
        shard: &RawShard,
        writer: &mut Writer,
        at: Ref,
        len: usize,
        by_bytes: Option<ByBytes<'_>>,
    ) {
        // Under the lock: plain stores, no read-modify-write needed. The
        // count before the publication, so that a settle that acquires the
        // log's end sees at least the entries before it (the map's room).
        shard
            .entries
            .store(shard.len() as u32 + 1, Ordering::Relaxed);
        shard.bytes.store(shard.bytes() + len, Ordering::Relaxed);
        // Published to walks before hits can find it: a thread whose intern
        // returned through a hit on this entry may snapshot at once, and
        // the snapshot must hold it (`tests/it/hit_then_snapshot.rs`).
        shard.end.publish(&writer.log);
        if let Some(by) = by_bytes {
            shard
                .hot
                .table
                .insert_reserved(&mut writer.table, by.hash, at, by.vacancy);
        }
    }

    /// The by-id side, made before the shard's first entry is published.
    #[cold]
    #[inline(never)]
    fn make_id_side(&mut self) -> Result<(), AllocError> {
        let side = try_box(IdSide::new()).ok_or(AllocError)?;
        // Relaxed: published by the log's end, which the first entry moves
        // after this.
        self.shard
            .hot
            .ids
            .store(Box::into_raw(side), Ordering::Relaxed);
        Ok(())
    }
}

impl RawShard {
    /// What the next insert into the by-bytes table needs
    /// ([`Table::reserve`](crate::raw::optimistic::table::Table::reserve)),
    /// `writer` the writer's state (the writer lock held).
    #[inline(always)]
    fn reserve_table(&self, writer: &mut Writer) -> Result<(), AllocError> {
        self.hot.table.reserve(&mut writer.table, self.hot.capacity)
    }
}
