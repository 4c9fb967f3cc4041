//! The whole-array reads: [`snapshot`](InternedStringDb::snapshot) and
//! the cursor's [`delta`](InternedStringDb::delta)s, each after a settle of
//! the NCs it reads, under the reference protocol's global lock for read.

use super::InternedStringDb;
use crate::nc;
use crate::snapshot::{Cursor, Snapshot, Whole};
use crate::strategy::shard::Shard;
use crate::strategy::Strategy;
use crate::sync;

impl<S: Strategy> InternedStringDb<S> {
    /// Merges every open NC's shard into one deduplicated id → bytes map.
    ///
    /// Runs concurrently with interning, without deadlock. What it contains:
    ///
    /// * every entry whose intern *happened before* this call (it returned on
    ///   this thread, or on a thread this one synchronised with), in an NC
    ///   open for the whole call;
    /// * of an entry interned during the call, either all of it or nothing;
    /// * an NC closed or opened during the call is merged wholly or not at
    ///   all; a closed NC is skipped.
    ///
    /// An id held with different bytes by two NCs keeps the bytes of the
    /// lower NC; the others, and every conflict the merged shards recorded,
    /// are in [`Snapshot::conflicts`].
    pub fn snapshot(&self) -> Snapshot {
        // Sized from the counters (exact when nothing interns): staging
        // then never regrows, which would copy everything again.
        self.settle(true);
        let totals = nc::totals(&self.contexts);
        let mut whole = Whole::with_capacity(totals);
        {
            let _global = self.merge_guard();
            nc::walk_open(&self.contexts, &mut whole);
        }
        whole.finish()
    }

    /// Settles every NC made (only the open ones if `open_only`): what a
    /// shard finds conflicts with lazily is brought up to date, the
    /// conflicts recorded in the NC's log ([`Shard::settle`]). Before every
    /// read of the by-id direction that spans NCs: a walk then holds every
    /// entry interned before the call.
    pub(super) fn settle(&self, open_only: bool) {
        for (nc, ctx) in nc::made(&self.contexts) {
            if !open_only || ctx.shard.is_open() {
                ctx.shard.settle(self.conflict_sink(ctx, nc));
            }
        }
    }

    /// Under the reference protocol, the global lock for read, held across
    /// a whole-array merge (a snapshot's or a delta's walks).
    fn merge_guard(&self) -> Option<sync::RwLockReadGuard<'_, ()>> {
        <S::Shard as Shard>::GLOBAL_MERGE_LOCK.then(|| sync::read(&self.global))
    }

    /// The entries of open NCs that `cursor` has not delivered yet, and the
    /// conflicts newly seen; advances `cursor`.
    ///
    /// * No id is delivered twice to one cursor, even when several NCs hold
    ///   it: the first NC delivered wins, as the lowest open NC does in a
    ///   [`snapshot`](Self::snapshot). Other bytes under a delivered id are
    ///   reported as conflicts, in the delta that meets them.
    /// * The deltas delivered to a new cursor add up to a snapshot taken at
    ///   the same moment, when nothing interns meanwhile; while interning goes
    ///   on, each entry arrives whole, in this delta or a later one, and each
    ///   conflict a shard records comes once, in the delta that delivers its
    ///   id or a later one.
    /// * Deltas are append-only, a snapshot is not: the deltas merged in
    ///   order ([`Snapshot::merge`]) are the snapshot taken after the last
    ///   of them, except in two cases. (1) An id delivered from one NC is
    ///   later registered with other bytes on a lower NC (or a lower NC that
    ///   was closed when it was delivered, holding other bytes, reopens):
    ///   the snapshot keeps the lowest open NC's bytes, the merged deltas the
    ///   bytes delivered, and the conflict's `kept` and `rejected` strings
    ///   are swapped between them. (2) An NC is closed after its entries
    ///   were delivered: the snapshot leaves out its entries and conflicts
    ///   (an id another open NC holds takes that NC's bytes), the merged
    ///   deltas keep them; reopened, it is in the snapshot again. With
    ///   neither, the merged deltas are the snapshot
    ///   (`tests/it/delta.rs`, `merged_deltas_*`).
    /// * A closed NC is skipped and keeps its place: once reopened, its
    ///   undelivered entries come in the next delta.
    /// * [`Snapshot::conflicts_dropped`] counts the conflicts the NCs visited
    ///   dropped past their [budgets](crate::Config::conflict_budget) since this
    ///   cursor's last delta visited them: the deltas' counts add up to the
    ///   snapshot's.
    /// * A cursor from before a [`reset`](Self::reset), or from another db,
    ///   starts over.
    ///
    /// The cost is in proportion to the new entries, plus a visit per NC.
    pub fn delta(&self, cursor: &mut Cursor) -> Snapshot {
        self.settle(true);
        cursor.delta(self.generation, &self.contexts, || self.merge_guard())
    }

    /// The [`delta`](Self::delta) for `cursor`, handed to `deliver`: the
    /// cursor keeps its advance only if `deliver` succeeds. On `deliver`'s
    /// error the cursor is rewound to where it was before the call, so the
    /// next delta delivers the same entries and conflicts again and a failed
    /// delivery (a copy refused for memory, a write that failed) loses
    /// nothing. [`save_delta`](Self::save_delta) is this with
    /// [`Snapshot::save`].
    ///
    /// ```
    /// use interned_string_db::{Cursor, InternedStringDb};
    /// let db = InternedStringDb::new();
    /// let mut cursor = Cursor::new();
    /// db.intern(0, "a").unwrap();
    /// let lost: Result<(), ()> = db.delta_with(&mut cursor, |_| Err(()));
    /// assert!(lost.is_err());
    /// assert_eq!(db.delta(&mut cursor).len(), 1, "delivered again");
    /// ```
    ///
    /// # Errors
    ///
    /// Those of `deliver`.
    pub fn delta_with<T, E>(
        &self,
        cursor: &mut Cursor,
        deliver: impl FnOnce(&Snapshot) -> Result<T, E>,
    ) -> Result<T, E> {
        self.delta_delivered(cursor, deliver).map(|(_, done)| done)
    }

    /// [`delta_with`](Self::delta_with), also handing back the delta: the
    /// one place a delivery's failure rewinds the cursor.
    fn delta_delivered<T, E>(
        &self,
        cursor: &mut Cursor,
        deliver: impl FnOnce(&Snapshot) -> Result<T, E>,
    ) -> Result<(Snapshot, T), E> {
        let mark = cursor.mark(self.generation, self.ncs());
        let delta = self.delta(cursor);
        match deliver(&delta) {
            Ok(done) => Ok((delta, done)),
            Err(e) => {
                cursor.rewind(mark, &delta);
                Err(e)
            }
        }
    }

    /// Saves the [`delta`](Self::delta) for `cursor` to `path`, atomically
    /// and in the format of `docs/snapshot-format.md` (as
    /// [`Snapshot::save`]), and returns it. The cursor advances only if the
    /// file is saved: on an error it delivers the same entries next time, so
    /// a failed save loses nothing.
    ///
    /// A delta file holds the entries new to the cursor; a conflict's `kept`
    /// bytes may be of an id an earlier delta delivered.
    /// [`Snapshot::merge`] of the loaded deltas, in order, is the snapshot,
    /// except in the two cases [`delta`](Self::delta) states (a lower NC
    /// gaining a delivered id with other bytes; an NC closed after
    /// delivering).
    ///
    /// # Errors
    ///
    /// Those of [`Snapshot::save`].
    pub fn save_delta(
        &self,
        cursor: &mut Cursor,
        path: impl AsRef<std::path::Path>,
    ) -> std::io::Result<Snapshot> {
        self.delta_delivered(cursor, |delta| delta.save(path))
            .map(|(delta, ())| delta)
    }
}
