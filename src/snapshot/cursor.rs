//! The cursor a delta advances, and the delta's bookkeeping: per NC, where
//! its walk and its conflict log were read to, every id delivered with the
//! bytes delivered, and the conflicts held until their id is; a mark and a
//! rewind, so that a delta whose save fails is delivered again.

use super::{Builder, Snapshot};
use crate::conflict::{Conflict, ConflictLog};
use crate::nc::{self, NcSlot, NcWalk};
use crate::strategy::shard::Shard;
use crate::strategy::Strategy;

/// What [`InternedStringDb::delta`](crate::InternedStringDb::delta) has
/// delivered to one reader: per NC, how far its entries and its conflict log
/// were read, and every id delivered (with the NC whose bytes were), so that
/// no id is delivered twice even when several NCs hold it.
///
/// A cursor belongs to one db between [`reset`](crate::InternedStringDb::reset)s:
/// used with another db, or after a reset, it starts over (its next delta is
/// everything).
///
/// Deltas are append-only: an id once delivered is never delivered again,
/// with other bytes or retracted. So the deltas merged in order
/// ([`Snapshot::merge`]) are the [snapshot](crate::InternedStringDb::snapshot)
/// except where the snapshot has since changed its mind about a delivered
/// id, in two cases (see [`delta`](crate::InternedStringDb::delta)): a lower
/// NC gains (or, reopened, brings back) the id with other bytes after a
/// higher NC delivered it, and an NC is closed after delivering.
///
/// ```
/// use interned_string_db::{Cursor, InternedStringDb};
/// let db = InternedStringDb::new();
/// let mut cursor = Cursor::new();
/// db.intern(0, "a").unwrap();
/// assert_eq!(db.delta(&mut cursor).len(), 1);
/// db.intern(1, "a").unwrap(); // already delivered, from NC 0
/// db.intern(1, "b").unwrap();
/// let delta = db.delta(&mut cursor);
/// assert_eq!(delta.len(), 1);
/// assert_eq!(delta.iter().next().unwrap().1, b"b");
/// assert!(db.delta(&mut cursor).is_empty());
/// ```
#[derive(Debug, Clone, Default)]
pub struct Cursor {
    /// The db contents the positions are in (see `InternedStringDb`'s
    /// `generation`); 0 for a new cursor, which no db has.
    generation: u64,
    /// Where each NC was read to.
    places: Vec<Place>,
    /// Every id delivered, and the NC whose bytes were delivered for it.
    delivered: hashbrown::HashMap<u64, u32>,
}

/// How far a cursor has read one NC.
#[derive(Debug, Clone, Default)]
pub(crate) struct Place {
    /// Entries read, as an insertion position.
    entries: usize,
    /// Conflicts of its log read.
    conflicts: usize,
    /// Its count of conflicts dropped past its budget, as last reported.
    dropped: u64,
    /// Conflicts read from its log under an id not delivered then (the
    /// entry was inserted after the walk that preceded the read): each is
    /// reported by the delta that delivers its id.
    pending: Vec<Conflict>,
}

/// Bytes met under an id already delivered, to compare with the bytes
/// delivered for it: (id, the NC they were delivered from, the bytes).
type Contested = Vec<(u64, usize, Box<[u8]>)>;

impl Cursor {
    /// A cursor that has delivered nothing.
    pub fn new() -> Self {
        Self::default()
    }

    /// How many distinct ids this cursor has delivered.
    pub fn delivered(&self) -> usize {
        self.delivered.len()
    }

    /// The delta of `contexts` (a db's NCs, its contents in `generation`)
    /// for this cursor, which it advances: see
    /// [`InternedStringDb::delta`](crate::InternedStringDb::delta). The
    /// walks run while `hold`'s guard is held (the db's global lock, under
    /// the reference protocol); the bytes met under delivered ids are
    /// compared after it is released, and after every shard is, since
    /// looking into another NC while one is being walked would nest NC locks.
    pub(crate) fn delta<S: Strategy, G>(
        &mut self,
        generation: u64,
        contexts: &[NcSlot<S>],
        hold: impl FnOnce() -> G,
    ) -> Snapshot {
        if self.generation != generation || self.places.len() != contexts.len() {
            self.start_over(generation, contexts.len());
        }
        // Sized for the undelivered entries (duplicates across NCs included).
        let totals = nc::totals(contexts);
        let fresh = totals.entries.saturating_sub(self.delivered.len());
        let mut builder =
            Builder::with_capacity(fresh, totals.bytes / totals.entries.max(1) * fresh);
        let mut walk = DeltaWalk {
            places: &mut self.places,
            delivered: &mut self.delivered,
            builder: &mut builder,
            contested: Contested::new(),
            visited: vec![false; contexts.len()],
        };
        {
            let _held = hold();
            nc::walk_open(contexts, &mut walk);
        }
        let DeltaWalk {
            mut contested,
            visited,
            ..
        } = walk;
        // Every NC walked is delivered now: the pending conflicts whose id is
        // delivered are compared with the delivered bytes, once. Only the
        // rejected bytes: the kept ones are the NC's entry, which its walk
        // compares (when it meets it, in this delta or another), so
        // comparing them here too would report that conflict twice.
        for (place, _) in self.places.iter_mut().zip(&visited).filter(|(_, v)| **v) {
            for c in core::mem::take(&mut place.pending) {
                match self.delivered.get(&c.id) {
                    Some(&from) => contested.push((c.id, from as usize, c.rejected)),
                    None => place.pending.push(c),
                }
            }
        }
        for (id, from, rejected) in contested {
            // Made: it delivered the id.
            let kept = contexts[from].get().and_then(|ctx| {
                ctx.shard
                    .resolve(id, |kept| (*kept != *rejected).then(|| Box::from(kept)))
            });
            if let Some(Some(kept)) = kept {
                builder.add_conflict(Conflict { id, kept, rejected });
            }
        }
        builder.finish()
    }

    /// Where the cursor is before a delta of a db of `ncs` NCs in
    /// `generation`, to [`rewind`](Self::rewind) to if the delta is lost.
    /// If that delta would start over (the cursor is another db's, or from
    /// before a reset), the mark takes the whole state, which starting over
    /// would discard, and leaves the cursor new.
    pub(crate) fn mark(&mut self, generation: u64, ncs: usize) -> Mark {
        if self.generation != generation || self.places.len() != ncs {
            Mark::Whole(core::mem::take(self))
        } else {
            Mark::Places(self.places.clone())
        }
    }

    /// Undoes the delta taken since `mark` (`delta`, which was lost): the
    /// cursor is as it was before it, so the next delta delivers its
    /// entries and conflicts again.
    pub(crate) fn rewind(&mut self, mark: Mark, delta: &Snapshot) {
        match mark {
            Mark::Whole(before) => *self = before,
            Mark::Places(places) => {
                // The delta's ids are exactly those it added to `delivered`.
                for (id, _) in delta {
                    self.delivered.remove(&id);
                }
                self.places = places;
            }
        }
    }

    /// Starts over for a db of `ncs` NCs in generation `generation`.
    fn start_over(&mut self, generation: u64, ncs: usize) {
        *self = Cursor {
            generation,
            places: vec![Place::default(); ncs],
            delivered: hashbrown::HashMap::new(),
        };
    }
}

/// A delta's walk of the open NCs: each from where the cursor read it to,
/// each id delivered once.
struct DeltaWalk<'a> {
    places: &'a mut [Place],
    delivered: &'a mut hashbrown::HashMap<u64, u32>,
    builder: &'a mut Builder,
    /// Bytes met under ids already delivered.
    contested: Contested,
    /// The NCs walked (open).
    visited: Vec<bool>,
}

impl NcWalk for DeltaWalk<'_> {
    fn from(&self, nc: usize) -> usize {
        self.places[nc].entries
    }

    fn entry(&mut self, nc: usize, id: u64, bytes: &[u8]) {
        match self.delivered.entry(id) {
            hashbrown::hash_map::Entry::Vacant(slot) => {
                slot.insert(nc as u32);
                self.builder.push(id, bytes);
            }
            hashbrown::hash_map::Entry::Occupied(from) => {
                self.contested
                    .push((id, *from.get() as usize, bytes.into()));
            }
        }
    }

    fn walked(&mut self, nc: usize, reached: usize, conflicts: &ConflictLog) {
        let place = &mut self.places[nc];
        self.visited[nc] = true;
        place.entries = reached;
        // The log is read after the walk: a conflict in it may be of an
        // entry inserted since. It waits in `pending` until its id is
        // delivered, in this delta or a later one.
        let mut at = 0;
        conflicts.for_each(|c| {
            if at >= place.conflicts {
                place.pending.push(c.to_conflict());
            }
            at += 1;
        });
        place.conflicts = at;
        let now = conflicts.dropped();
        self.builder
            .add_conflicts_dropped(now.saturating_sub(place.dropped));
        place.dropped = now;
    }
}

/// A cursor's state before a delta, to rewind it to when the delta is lost
/// (not saved).
#[derive(Debug)]
pub(crate) enum Mark {
    /// The delta started over: the whole state before it.
    Whole(Cursor),
    /// The places before it; the delta's ids are taken out of the delivered
    /// set by [`Cursor::rewind`].
    Places(Vec<Place>),
}
