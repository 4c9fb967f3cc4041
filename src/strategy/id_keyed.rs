//! The intern of every strategy keyed by id (all but the optimistic one):
//! the id-keyed map an NC holds ([`IdKeyedMap`], under the strategy's lock
//! for the locked ones) and [`intern_by_id`], written once over it.

use super::admission::compare;
use super::shard::{ConflictSink, Interned, Key, Refusal};
use super::Registered;

/// What [`IdKeyedMap::insert`] answers: `None` once inserted, `Some` of what an
/// insert that raced it stored first, or why it refused.
pub(crate) type Found<R> = Result<Option<R>, Refusal>;

/// An NC's id-keyed map, as the comparison strategies hold it (under
/// their lock, for the locked ones): what [`intern_by_id`] needs.
pub(crate) trait IdKeyedMap {
    /// `Err(Closed)` if the NC is closed.
    fn check_open(&self) -> Result<(), Refusal>;

    /// `f` of the bytes stored under `id`, if any.
    fn get<R>(&self, id: u64, f: impl FnOnce(&[u8]) -> R) -> Option<R>;

    /// Inserts `id → bytes` (after `get` found nothing): `None` once
    /// inserted, or `Some(f(stored))` if an insert that raced this one
    /// stored the id first.
    fn insert<R>(&mut self, id: u64, bytes: &[u8], f: impl FnOnce(&[u8]) -> R) -> Found<R>;
}

/// The intern of every strategy keyed by id: the key's id (computed
/// outside any lock: a locked strategy passes a key whose id is known),
/// the open check, a lookup, then an insert, each found string compared.
#[inline]
pub(crate) fn intern_by_id(
    map: &mut impl IdKeyedMap,
    key: Key<'_>,
    conflicts: ConflictSink<'_>,
) -> Interned {
    let (id, bytes) = (key.id()?, key.bytes);
    map.check_open()?;
    let found = |stored: &[u8]| compare(stored, bytes, id, conflicts);
    let outcome = match map.get(id, found) {
        Some(outcome) => outcome,
        None => map
            .insert(id, bytes, found)?
            .unwrap_or(Registered::Inserted),
    };
    Ok((id, outcome))
}
