//! Conflicts: one id seen with two different byte strings.

use core::hash::BuildHasher;

use crate::sync::{self, Mutex};

/// One id seen with two different byte strings: a 50-bit SipHash collision,
/// or (through [`register`](crate::InternedStringDb::register) and the C ABI)
/// a caller-supplied id that does not match its string.
///
/// The first string stored is kept; the other is reported here, or, once the
/// NC's [conflict budget](crate::Config::conflict_budget) is spent, counted
/// in [`conflicts_dropped`](crate::InternedStringDb::conflicts_dropped).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Conflict {
    /// The contested id.
    pub id: u64,
    /// The bytes the id resolves to.
    pub kept: Box<[u8]>,
    /// Bytes that were refused under the same id.
    pub rejected: Box<[u8]>,
}

/// Bytes of bookkeeping charged to the budget for each stored string (a
/// rejected one, or an id's kept one), beside the string's own length: a
/// 32-byte list slot (on 64-bit targets; a unit test checks it) and a table
/// slot, each up to twice over while their vectors grow by doubling.
/// `tests/memory.rs` checks that the log's heap stays within the budget,
/// for long strings and short.
pub(crate) const RECORD_OVERHEAD: usize = 128;

/// One recorded conflict, borrowed from the log.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ConflictRef<'a> {
    /// The contested id.
    pub(crate) id: u64,
    /// The bytes the NC keeps for it.
    pub(crate) kept: &'a [u8],
    /// Bytes refused under it.
    pub(crate) rejected: &'a [u8],
}

impl ConflictRef<'_> {
    /// An owned copy.
    pub(crate) fn to_conflict(self) -> Conflict {
        Conflict {
            id: self.id,
            kept: self.kept.into(),
            rejected: self.rejected.into(),
        }
    }
}

/// The conflicts one NC has seen, each distinct (id, rejected bytes) once,
/// within a byte budget: past it, conflicts are counted, not stored, so that
/// a caller registering many strings under one id (the C ABI's
/// `register_entry` lets any caller do so) cannot grow memory without bound.
#[derive(Debug)]
pub(crate) struct ConflictLog {
    /// Allocated at the first conflict: most NCs never see one, and the
    /// list's empty tables (about 150 bytes) would sit in every NC's
    /// context (`docs/history.md`).
    /// (The budget is the db's, passed to [`record`](Self::record): held
    /// here it would take an NC's context from two cache lines to three.)
    inner: Mutex<Option<Box<ConflictList>>>,
}

#[derive(Debug, Default)]
struct ConflictList {
    /// In the order they were seen.
    list: Vec<StoredConflict>,
    /// Each contested id's kept string, once, however many conflicts it has.
    kept: Vec<Box<[u8]>>,
    /// Id → its position in `kept`.
    kept_at: hashbrown::HashMap<u64, usize>,
    /// Positions in `list`, by a hash of (id, rejected bytes): a repeat is
    /// found in O(1), by borrowing, with no allocation.
    seen: hashbrown::HashTable<usize>,
    hasher: hashbrown::DefaultHashBuilder,
    /// Bytes charged against the budget so far.
    charged: usize,
    /// Conflicts refused because the budget was spent (a repeat of one
    /// counts again: it was not stored, so it cannot be recognised).
    dropped: u64,
}

#[derive(Debug)]
struct StoredConflict {
    id: u64,
    /// Position of the id's kept string in `ConflictList::kept`.
    kept: usize,
    rejected: Box<[u8]>,
}

impl ConflictLog {
    /// An empty log; it allocates nothing until its first conflict.
    pub(crate) fn new() -> Self {
        ConflictLog {
            inner: Mutex::new(None),
        }
    }

    /// Records a conflict found in NC `nc`. The first time a given
    /// (id, rejected) pair is seen it is stored and logged as a warning with
    /// both strings; repeats are neither stored nor logged again, so a hot
    /// loop re-interning a colliding string cannot flood the log. Once the
    /// budget is spent, a new conflict is only counted (and the first such
    /// one logged). `budget`: the bytes the stored conflicts may take,
    /// [`RECORD_OVERHEAD`] included (the db's
    /// [`conflict_budget`](crate::Config::conflict_budget), the same on
    /// every call).
    pub(crate) fn record(&self, budget: usize, nc: usize, id: u64, kept: &[u8], rejected: &[u8]) {
        let mut conflicts = sync::lock(&self.inner);
        let conflicts = conflicts.get_or_insert_with(Box::default);
        let ConflictList {
            list,
            kept: kept_strings,
            kept_at,
            seen,
            hasher,
            charged,
            dropped,
        } = &mut **conflicts;
        let hash = hasher.hash_one((id, rejected));
        let is_repeat = |&at: &usize| list[at].id == id && *list[at].rejected == *rejected;
        if seen.find(hash, is_repeat).is_some() {
            return;
        }
        let known_kept = kept_at.get(&id).copied();
        let charge = rejected
            .len()
            .saturating_add(RECORD_OVERHEAD)
            .saturating_add(known_kept.map_or(kept.len().saturating_add(RECORD_OVERHEAD), |_| 0));
        if charge > budget.saturating_sub(*charged) {
            *dropped += 1;
            if *dropped == 1 {
                log::warn!(
                    "Interned string db's conflict budget of {} bytes is spent in NeuronCore {nc}: further conflicts are counted, not stored (first: id {id}, {:?} refused for {:?})",
                    budget,
                    String::from_utf8_lossy(rejected),
                    String::from_utf8_lossy(kept),
                );
            }
            return;
        }
        // Log before storing: if the logger panics, nothing is half-recorded
        // and the next attempt records it.
        log::warn!(
            "Interned string db found conflicting id {id} with name {:?} and {:?} (NeuronCore {nc}; the first is kept)",
            String::from_utf8_lossy(kept),
            String::from_utf8_lossy(rejected),
        );
        let kept_index = known_kept.unwrap_or_else(|| {
            kept_strings.push(kept.into());
            kept_at.insert(id, kept_strings.len() - 1);
            kept_strings.len() - 1
        });
        seen.insert_unique(hash, list.len(), |&at| {
            hasher.hash_one((list[at].id, &*list[at].rejected))
        });
        list.push(StoredConflict {
            id,
            kept: kept_index,
            rejected: rejected.into(),
        });
        *charged += charge;
    }

    /// Calls `f` on every recorded conflict, in the order they were seen.
    pub(crate) fn for_each(&self, mut f: impl FnMut(ConflictRef<'_>)) {
        let conflicts = sync::lock(&self.inner);
        let Some(conflicts) = conflicts.as_deref() else {
            return;
        };
        for stored in &conflicts.list {
            f(ConflictRef {
                id: stored.id,
                kept: &conflicts.kept[stored.kept],
                rejected: &stored.rejected,
            });
        }
    }

    /// How many distinct conflicts were recorded.
    pub(crate) fn len(&self) -> usize {
        sync::lock(&self.inner).as_ref().map_or(0, |c| c.list.len())
    }

    /// How many conflicts the budget kept out of the log.
    pub(crate) fn dropped(&self) -> u64 {
        sync::lock(&self.inner).as_ref().map_or(0, |c| c.dropped)
    }
}

#[cfg(all(test, target_pointer_width = "64"))]
mod tests {
    /// The list slot that [`RECORD_OVERHEAD`](super::RECORD_OVERHEAD)
    /// counts: an id, a position and a boxed slice.
    #[test]
    fn a_list_slot_is_32_bytes() {
        assert_eq!(size_of::<super::StoredConflict>(), 32);
    }
}
