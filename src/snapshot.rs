//! The snapshot: every open shard merged into one deduplicated id → bytes map.

use crate::conflict::Conflict;

/// A point-in-time union of every open NC's shard, with the conflicts seen.
///
/// Built by [`InternedStringDb::snapshot`](crate::InternedStringDb::snapshot).
/// Because ids are a pure function of the bytes, the merge is a deduplicating
/// union, never a relabel: an id means the same string in every shard.
///
/// Entries are kept sorted by id: lookup is a binary search and iteration is
/// in id order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Snapshot {
    entries: Vec<(u64, Box<[u8]>)>,
    conflicts: Vec<Conflict>,
    conflicts_dropped: u64,
}

impl Snapshot {
    /// Builds a snapshot from merged, deduplicated entries and conflicts.
    pub(crate) fn from_parts(
        mut entries: Vec<(u64, Box<[u8]>)>,
        mut conflicts: Vec<Conflict>,
    ) -> Self {
        entries.sort_unstable_by_key(|&(id, _)| id);
        conflicts.sort_unstable();
        conflicts.dedup();
        Snapshot {
            entries,
            conflicts,
            conflicts_dropped: 0,
        }
    }

    /// Sets the count of conflicts the merged NCs did not store.
    pub(crate) fn with_conflicts_dropped(mut self, dropped: u64) -> Self {
        self.conflicts_dropped = dropped;
        self
    }

    /// The bytes of `id`, if the snapshot holds it.
    pub fn get(&self, id: u64) -> Option<&[u8]> {
        self.entries
            .binary_search_by_key(&id, |&(id, _)| id)
            .ok()
            .map(|at| &*self.entries[at].1)
    }

    /// The string of `id`, if the snapshot holds it and it is UTF-8.
    pub fn get_str(&self, id: u64) -> Option<&str> {
        self.get(id).and_then(|b| core::str::from_utf8(b).ok())
    }

    /// Whether the snapshot holds `id`.
    pub fn contains(&self, id: u64) -> bool {
        self.get(id).is_some()
    }

    /// The number of distinct ids.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether the snapshot holds no id.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The entries in increasing id order.
    pub fn iter(&self) -> Iter<'_> {
        Iter(self.entries.iter())
    }

    /// Every conflict seen in the merged NCs, sorted and each distinct
    /// (id, rejected bytes) once. `kept` is always what [`get`](Self::get)
    /// returns for the id.
    pub fn conflicts(&self) -> &[Conflict] {
        &self.conflicts
    }

    /// How many conflicts the merged NCs counted without storing them, their
    /// [conflict budgets](crate::Config::conflict_budget) being spent; they
    /// are missing from [`conflicts`](Self::conflicts). Zero unless many
    /// strings contest some id.
    pub fn conflicts_dropped(&self) -> u64 {
        self.conflicts_dropped
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
pub struct Iter<'a>(core::slice::Iter<'a, (u64, Box<[u8]>)>);

impl<'a> Iterator for Iter<'a> {
    type Item = (u64, &'a [u8]);

    fn next(&mut self) -> Option<Self::Item> {
        self.0.next().map(|(id, bytes)| (*id, &**bytes))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.0.size_hint()
    }
}

impl ExactSizeIterator for Iter<'_> {}
