//! The cursor a delta advances.

/// What [`InternedStringDb::delta`](crate::InternedStringDb::delta) has
/// delivered to one reader: per NC, how far its entries and its conflict log
/// were read, and every id delivered (with the NC whose bytes were), so that
/// no id is delivered twice even when several NCs hold it.
///
/// A cursor belongs to one db between [`reset`](crate::InternedStringDb::reset)s:
/// used with another db, or after a reset, it starts over (its next delta is
/// everything).
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
    pub(crate) generation: u64,
    /// Per NC: entries read, as an insertion position.
    pub(crate) entries: Vec<usize>,
    /// Per NC: conflicts of its log read.
    pub(crate) conflicts: Vec<usize>,
    /// Per NC: its count of conflicts dropped past its budget, as last
    /// reported.
    pub(crate) dropped: Vec<u64>,
    /// Every id delivered, and the NC whose bytes were delivered for it.
    pub(crate) delivered: hashbrown::HashMap<u64, u32>,
}

impl Cursor {
    /// A cursor that has delivered nothing.
    pub fn new() -> Self {
        Self::default()
    }

    /// How many distinct ids this cursor has delivered.
    pub fn delivered(&self) -> usize {
        self.delivered.len()
    }

    /// Where the cursor is, to [`rewind`](Self::rewind) to.
    pub(crate) fn mark(&self) -> Mark {
        Mark {
            generation: self.generation,
            entries: self.entries.clone(),
            conflicts: self.conflicts.clone(),
            dropped: self.dropped.clone(),
        }
    }

    /// Undoes the deltas delivered since `mark` (`delivered`, their entries
    /// together), so that the next delta delivers them again.
    pub(crate) fn rewind(&mut self, mark: Mark, delivered: impl IntoIterator<Item = u64>) {
        for id in delivered {
            self.delivered.remove(&id);
        }
        let Mark {
            generation,
            entries,
            conflicts,
            dropped,
        } = mark;
        // Positions from another generation (the delta started over): the
        // next delta starts over again, from an empty `delivered`.
        self.generation = generation;
        self.entries = entries;
        self.conflicts = conflicts;
        self.dropped = dropped;
    }

    /// Starts over for a db of `ncs` NCs in generation `generation`.
    pub(crate) fn start_over(&mut self, generation: u64, ncs: usize) {
        *self = Cursor {
            generation,
            entries: vec![0; ncs],
            conflicts: vec![0; ncs],
            dropped: vec![0; ncs],
            delivered: hashbrown::HashMap::new(),
        };
    }
}

/// A cursor's positions, to rewind it to when a delta is lost (not saved).
#[derive(Debug)]
pub(crate) struct Mark {
    generation: u64,
    entries: Vec<usize>,
    conflicts: Vec<usize>,
    dropped: Vec<u64>,
}
