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
/// `tests/it/memory.rs` checks that the log's heap stays within the budget,
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
/// A conflict whose copies or table growth the allocator refuses is counted
/// too: recording never allocates infallibly, so it never aborts.
#[derive(Debug)]
pub(crate) struct ConflictLog {
    /// Boxed, so that the list's empty tables (about 150 bytes) stay out of
    /// the NC's context (`docs/history.md`); allocated with the context
    /// (fallibly: the NC's first write fails instead), so that a conflict
    /// met when memory is short can always be counted.
    /// (The budget is the db's, passed to [`record`](Self::record): held
    /// here it would take an NC's context from two cache lines to three.)
    inner: Mutex<Box<[ConflictList; 1]>>,
}

/// Memory for a conflict's copies or tables was refused.
#[derive(Debug)]
struct Refused;

/// A copy of `bytes`, allocated fallibly.
fn try_copy(bytes: &[u8]) -> Result<Box<[u8]>, Refused> {
    let mut copy = Vec::new();
    copy.try_reserve_exact(bytes.len()).map_err(|_| Refused)?;
    copy.extend_from_slice(bytes);
    // Exactly as long as its capacity: no reallocation.
    Ok(copy.into_boxed_slice())
}

/// Room for one more item in `items`, reserved fallibly.
fn room_for_one<T>(items: &mut Vec<T>) -> Result<(), Refused> {
    items.try_reserve(1).map_err(|_| Refused)
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
    /// Conflicts refused because the budget was spent, or because memory
    /// to store them was refused (a repeat of one counts again: it was not
    /// stored, so it cannot be recognised).
    dropped: u64,
    /// Whether a conflict was counted past the budget (its first is
    /// logged).
    spent: bool,
    /// Whether a conflict was counted for memory refused (its first is
    /// logged).
    refused: bool,
}

#[derive(Debug)]
struct StoredConflict {
    id: u64,
    /// Position of the id's kept string in `ConflictList::kept`.
    kept: usize,
    rejected: Box<[u8]>,
}

impl ConflictLog {
    /// An empty log: its list's box, with empty tables; `None` if that
    /// box could not be allocated.
    pub(crate) fn try_new() -> Option<Self> {
        let mut one = Vec::new();
        one.try_reserve_exact(1).ok()?;
        one.push(ConflictList::default());
        // Exactly one item and as much capacity: no reallocation.
        let inner: Box<[ConflictList; 1]> = one.into_boxed_slice().try_into().ok()?;
        Some(ConflictLog {
            inner: Mutex::new(inner),
        })
    }

    /// Records a conflict found in NC `nc`. The first time a given
    /// (id, rejected) pair is seen it is stored and logged as a warning with
    /// both strings; repeats are neither stored nor logged again, so a hot
    /// loop re-interning a colliding string cannot flood the log. Once the
    /// budget is spent, a new conflict is only counted (and the first such
    /// one logged). `budget`: the bytes the stored conflicts may take,
    /// [`RECORD_OVERHEAD`] included (the db's
    /// [`conflict_budget`](crate::Config::conflict_budget), the same on
    /// every call). If memory for the copies of the strings or for the
    /// tables' growth is refused, the conflict is counted as one past the
    /// budget is (the first such one logged), and nothing is half-stored.
    pub(crate) fn record(&self, budget: usize, nc: usize, id: u64, kept: &[u8], rejected: &[u8]) {
        let mut conflicts = sync::lock(&self.inner);
        let ConflictList {
            list,
            kept: kept_strings,
            kept_at,
            seen,
            hasher,
            charged,
            dropped,
            spent,
            refused,
        } = &mut conflicts[0];
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
            if !*spent {
                *spent = true;
                log::warn!(
                    "Interned string db's conflict budget of {} bytes is spent in NeuronCore {nc}: further conflicts are counted, not stored (first: id {id}, {:?} refused for {:?})",
                    budget,
                    String::from_utf8_lossy(rejected),
                    String::from_utf8_lossy(kept),
                );
            }
            return;
        }
        // Every copy and every table's room first, fallibly: a refusal
        // leaves the list as it was, and counts the conflict.
        let prepared = seen
            .try_reserve(1, |&at| hasher.hash_one((list[at].id, &*list[at].rejected)))
            .map_err(|_| Refused)
            .and_then(|()| room_for_one(list))
            .and_then(|()| match known_kept {
                Some(_) => Ok(None),
                None => {
                    room_for_one(kept_strings)?;
                    kept_at.try_reserve(1).map_err(|_| Refused)?;
                    try_copy(kept).map(Some)
                }
            })
            .and_then(|kept_copy| Ok((kept_copy, try_copy(rejected)?)));
        let Ok((kept_copy, rejected_copy)) = prepared else {
            *dropped += 1;
            if !*refused {
                *refused = true;
                log::warn!(
                    "Interned string db could not allocate memory to store a conflict on id {id} in NeuronCore {nc}: it is counted, not stored"
                );
            }
            return;
        };
        // Log before storing: if the logger panics, nothing is half-recorded
        // and the next attempt records it.
        log::warn!(
            "Interned string db found conflicting id {id} with name {:?} and {:?} (NeuronCore {nc}; the first is kept)",
            String::from_utf8_lossy(kept),
            String::from_utf8_lossy(rejected),
        );
        // The room is reserved: none of these allocates.
        let kept_index = match (known_kept, kept_copy) {
            (Some(index), _) => index,
            (None, copy) => {
                kept_strings.push(copy.unwrap_or_default());
                kept_at.insert(id, kept_strings.len() - 1);
                kept_strings.len() - 1
            }
        };
        seen.insert_unique(hash, list.len(), |&at| {
            hasher.hash_one((list[at].id, &*list[at].rejected))
        });
        list.push(StoredConflict {
            id,
            kept: kept_index,
            rejected: rejected_copy,
        });
        *charged += charge;
    }

    /// Calls `f` on every recorded conflict, in the order they were seen.
    pub(crate) fn for_each(&self, mut f: impl FnMut(ConflictRef<'_>)) {
        let conflicts = sync::lock(&self.inner);
        let conflicts = &conflicts[0];
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
        sync::lock(&self.inner)[0].list.len()
    }

    /// How many conflicts the budget, or memory refused, kept out of the
    /// log.
    pub(crate) fn dropped(&self) -> u64 {
        sync::lock(&self.inner)[0].dropped
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
