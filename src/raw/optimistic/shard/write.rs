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
        self.writer_mut()?;
        let log = &shard.hot.log;
        if shard.hot.ids.load(Ordering::Relaxed).is_null() {
            self.make_id_side()?;
        }
        let writer = self.writer.as_mut().expect("made above");
        if by_bytes.is_some() {
            shard
                .hot
                .table
                .reserve(&mut writer.table, shard.hot.capacity)?;
        }
        let at = log.append(&mut writer.log, id, bytes, number)?;
        // Under the lock: plain stores, no read-modify-write needed. The
        // count before the publication, so that a settle that acquires the
        // log's end sees at least the entries before it (the map's room).
        shard
            .entries
            .store(shard.len() as u32 + 1, Ordering::Relaxed);
        shard
            .bytes
            .store(shard.bytes() + bytes.len(), Ordering::Relaxed);
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
        Ok(at)
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
