//! Conflicts: one id seen with two different byte strings.

use crate::sync::{self, Mutex};

/// One id seen with two different byte strings: a 50-bit SipHash collision,
/// or (through [`register`](crate::InternedStringDb::register) and the C ABI)
/// a caller-supplied id that does not match its string.
///
/// The first string stored is kept; the other is reported here, never
/// silently dropped.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Conflict {
    /// The contested id.
    pub id: u64,
    /// The bytes the id resolves to.
    pub kept: Box<[u8]>,
    /// Bytes that were refused under the same id.
    pub rejected: Box<[u8]>,
}

/// The conflicts one NC has seen, each distinct (id, rejected bytes) once.
#[derive(Debug, Default)]
pub(crate) struct ConflictLog {
    inner: Mutex<ConflictList>,
}

#[derive(Debug, Default)]
struct ConflictList {
    /// In the order they were seen.
    list: Vec<Conflict>,
    /// Id → positions in `list`: a repeat is found by borrowing, with no
    /// allocation (few strings share an id).
    by_id: hashbrown::HashMap<u64, Vec<usize>>,
}

impl ConflictLog {
    /// Records a conflict found in NC `nc`. The first time a given
    /// (id, rejected) pair is seen it is stored and logged as a warning with
    /// both strings; repeats are neither stored nor logged again, so a hot
    /// loop re-interning a colliding string cannot flood the log.
    pub(crate) fn record(&self, nc: usize, id: u64, kept: &[u8], rejected: &[u8]) {
        let mut conflicts = sync::lock(&self.inner);
        let ConflictList { list, by_id } = &mut *conflicts;
        let seen = by_id.get(&id).into_iter().flatten();
        if seen.clone().any(|&at| *list[at].rejected == *rejected) {
            return;
        }
        // Log before storing: if the logger panics, nothing is half-recorded
        // and the next attempt records it.
        log::warn!(
            "Interned string db found conflicting id {id} with name {:?} and {:?} (NeuronCore {nc}; the first is kept)",
            String::from_utf8_lossy(kept),
            String::from_utf8_lossy(rejected),
        );
        by_id.entry(id).or_default().push(list.len());
        list.push(Conflict {
            id,
            kept: kept.into(),
            rejected: rejected.into(),
        });
    }

    /// Calls `f` on every recorded conflict.
    pub(crate) fn for_each(&self, mut f: impl FnMut(&Conflict)) {
        sync::lock(&self.inner).list.iter().for_each(&mut f);
    }

    /// How many distinct conflicts were recorded.
    pub(crate) fn len(&self) -> usize {
        sync::lock(&self.inner).list.len()
    }

    /// Forgets every conflict.
    pub(crate) fn clear(&mut self) {
        *sync::lock(&self.inner) = ConflictList::default();
    }
}
