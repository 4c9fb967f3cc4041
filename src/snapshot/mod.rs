//! The snapshot: every open shard merged into one deduplicated id → bytes
//! map ([`Snapshot`], built by `build`); the delta [`Cursor`]; snapshot
//! files, read whole (`file`) or in place ([`MappedSnapshot`]), both
//! checking the format's rules the same way (`format`).

mod build;
mod cursor;
mod file;
mod format;
mod mapped;
mod search;
mod walk;

pub(crate) use self::build::Builder;
pub use self::cursor::Cursor;
pub use self::format::{LoadError, LoadProblem};
pub use self::mapped::{MappedConflict, MappedConflicts, MappedIter, MappedSnapshot};
pub(crate) use self::walk::Whole;

use crate::conflict::Conflict;

/// A point-in-time union of every open NC's shard, with the conflicts seen.
///
/// Built by [`InternedStringDb::snapshot`](crate::InternedStringDb::snapshot).
/// Because ids are a pure function of the bytes, the merge is a deduplicating
/// union, never a relabel: an id means the same string in every shard.
///
/// Entries are kept sorted by id: a lookup interpolates (ids are uniform
/// hashes), then bisects, and iteration is in id order. The strings live in
/// one buffer, in id order, beside one id and one end offset per entry: the
/// string bytes plus 16 bytes per entry.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Snapshot {
    /// Strictly increasing.
    ids: Vec<u64>,
    /// Entry `i`'s bytes are `bytes[ends[i - 1]..ends[i]]` (from 0 for the
    /// first): non-decreasing, the last equal to `bytes.len()`.
    ends: Vec<usize>,
    bytes: Vec<u8>,
    /// Sorted, each distinct once, `kept` always the entry's bytes.
    conflicts: Vec<Conflict>,
    /// Conflicts counted but not stored by the conflict logs merged here.
    conflicts_dropped: u64,
}

impl Snapshot {
    /// The bytes of `id`, if the snapshot holds it.
    pub fn get(&self, id: u64) -> Option<&[u8]> {
        self.find(id).map(|at| self.entry(at))
    }

    /// The string of `id`: `None` if the snapshot does not hold it, and
    /// `Some(Err(_))` if it does but its bytes are not UTF-8 (an id names
    /// bytes, not necessarily text; [`get`](Self::get) returns them as they
    /// are).
    ///
    /// ```
    /// use interned_string_db::{get_id, InternedStringDb};
    ///
    /// let db = InternedStringDb::new();
    /// let text = db.intern(0, "span/forward").unwrap();
    /// let binary = db.intern_bytes(0, b"\xff\xfe").unwrap();
    /// let snapshot = db.snapshot();
    /// assert_eq!(snapshot.get_str(text), Some(Ok("span/forward")));
    /// assert!(matches!(snapshot.get_str(binary), Some(Err(_))));
    /// assert_eq!(snapshot.get_str(get_id(b"never interned")), None);
    /// ```
    pub fn get_str(&self, id: u64) -> Option<Result<&str, core::str::Utf8Error>> {
        self.get(id).map(core::str::from_utf8)
    }

    /// Whether the snapshot holds `id`.
    pub fn contains(&self, id: u64) -> bool {
        self.find(id).is_some()
    }

    /// The number of distinct ids.
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    /// Whether the snapshot holds no id.
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// The entries in increasing id order.
    pub fn iter(&self) -> Iter<'_> {
        Iter {
            snapshot: self,
            at: 0,
        }
    }

    /// Every conflict seen in the merged NCs, sorted and each distinct
    /// (id, rejected bytes) once. `kept` is always what [`get`](Self::get)
    /// returns for the id, except in a [delta](crate::InternedStringDb::delta),
    /// where the id may have been delivered by an earlier delta (`kept` is
    /// then the bytes delivered then).
    pub fn conflicts(&self) -> &[Conflict] {
        &self.conflicts
    }

    /// How many conflicts the merged NCs (or inputs) counted without storing
    /// them, their [conflict budgets](crate::Config::conflict_budget) being
    /// spent; they are missing from [`conflicts`](Self::conflicts). Zero
    /// unless many strings contest some id. In a
    /// [delta](crate::InternedStringDb::delta), those counted since the
    /// cursor's last delta.
    pub fn conflicts_dropped(&self) -> u64 {
        self.conflicts_dropped
    }

    /// The union of `snapshots`: every id once, with the bytes of the first
    /// snapshot (in the order given) that holds it; other bytes under it are
    /// conflicts, beside every input's own conflicts (normalised to the kept
    /// bytes). Because ids are a pure function of the bytes, snapshots from
    /// many processes and hosts merge with no remapping.
    pub fn merge<'a>(snapshots: impl IntoIterator<Item = &'a Snapshot>) -> Snapshot {
        let inputs: Vec<&Snapshot> = snapshots.into_iter().collect();
        let mut builder = Builder::with_capacity(
            inputs.iter().map(|s| s.len()).sum(),
            inputs.iter().map(|s| s.string_bytes()).sum(),
        );
        for input in inputs {
            for (id, bytes) in input {
                builder.push(id, bytes);
            }
            for conflict in &input.conflicts {
                builder.add_conflict(conflict.clone());
            }
            builder.add_conflicts_dropped(input.conflicts_dropped);
        }
        builder.finish()
    }

    /// Bytes of string data held (the sum of the entries' lengths).
    pub fn string_bytes(&self) -> usize {
        self.bytes.len()
    }

    /// The position of `id` among the ids, if the snapshot holds it
    /// ([`search::find`]: the ids are sorted).
    fn find(&self, id: u64) -> Option<usize> {
        search::find(self.ids.len(), id, |at| self.ids[at])
    }

    /// The bytes of the entry at `at` (in id order).
    fn entry(&self, at: usize) -> &[u8] {
        let start = if at == 0 { 0 } else { self.ends[at - 1] };
        &self.bytes[start..self.ends[at]]
    }
}

impl<'a> IntoIterator for &'a Snapshot {
    type Item = (u64, &'a [u8]);
    type IntoIter = Iter<'a>;

    fn into_iter(self) -> Iter<'a> {
        self.iter()
    }
}

/// An iterator over a [`Snapshot`]'s entries in increasing id order.
#[derive(Debug, Clone)]
pub struct Iter<'a> {
    snapshot: &'a Snapshot,
    at: usize,
}

impl<'a> Iterator for Iter<'a> {
    type Item = (u64, &'a [u8]);

    fn next(&mut self) -> Option<Self::Item> {
        let id = *self.snapshot.ids.get(self.at)?;
        let bytes = self.snapshot.entry(self.at);
        self.at += 1;
        Some((id, bytes))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let left = self.snapshot.len() - self.at;
        (left, Some(left))
    }
}

impl ExactSizeIterator for Iter<'_> {}

/// The next number of a xorshift generator whose state is `state`: the
/// seeded ids of the snapshot's unit tests.
#[cfg(test)]
fn xorshift(state: &mut u64) -> u64 {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    *state
}
