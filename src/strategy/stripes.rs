//! Interning into an NC's stripes (`raw::optimistic::striped`), once the
//! optimistic shard moved to them (when a miss met contention; the
//! striped strategy's after eight entries), after the frozen first shard,
//! whose entries come first.

use super::admission::compare;
use super::shard::{ConflictSink, IdSource, Interned, Key, Refusal};
use super::Registered;
use crate::raw::{AppendError, ByBytes, RawShard, Refused, StripeGuard, StripedShard};

/// An NC's stripes, and the frozen shard before them (its entries precede
/// every stripe's). An NC with a byte cap or a slab limit never moves, so
/// the stripes have neither.
#[derive(Clone, Copy)]
pub(crate) struct Stripes<'a> {
    /// The stripes.
    pub(crate) stripes: &'a StripedShard,
    /// The frozen shard: nothing is appended to it any more.
    pub(crate) base: &'a RawShard,
}

impl<'a> Stripes<'a> {
    /// Settles the base wholly, then the stripes after it, recording the
    /// conflicts found in `conflicts`. `Err` on an allocation failure:
    /// what was not settled waits for the next settle.
    pub(crate) fn settle(&self, conflicts: ConflictSink<'_>) -> Result<(), Refusal> {
        let record = |id, kept: &[u8], rejected: &[u8]| conflicts.record(id, kept, rejected);
        self.base.settle(record).map_err(|_| Refusal::OutOfMemory)?;
        self.stripes
            .settle(Some(self.base), record)
            .map_err(|_| Refusal::OutOfMemory)
    }

    /// The entry that holds `id` first, if a settle took it: the base's,
    /// or the stripes' with its place.
    pub(crate) fn find_mapped(
        &self,
        id: u64,
    ) -> Option<(Option<crate::raw::Place>, crate::raw::Entry<'a>)> {
        if let Some(entry) = self.base.find_mapped_by_id(id) {
            return Some((None, entry));
        }
        self.stripes
            .find_mapped(id)
            .map(|(place, entry)| (Some(place), entry))
    }

    /// Entries and bytes of string data held, as of the last settle.
    pub(crate) fn held(&self) -> (usize, usize) {
        let (entries, bytes) = self.stripes.held();
        let (base_entries, base_bytes) = self.base.held();
        (entries + base_entries, bytes + base_bytes)
    }

    /// Interns `key`: a plain intern (the db's id of the bytes, its outcome
    /// not read) by [`intern_plain`](Self::intern_plain), with `hash` (the
    /// bytes' hash, if the hit path computed it) and whether its miss was
    /// `predicted` (the hit path did not probe the stripe); any other by
    /// [`intern_exact`](Self::intern_exact).
    #[inline]
    pub(crate) fn intern(
        &self,
        key: Key<'_>,
        hash: Option<u64>,
        predicted: bool,
        conflicts: ConflictSink<'_>,
    ) -> Interned {
        let exact = key.wants_outcome() || key.source() == IdSource::Caller;
        let hash = hash.unwrap_or_else(|| self.stripes.bytes_hash(key.bytes));
        if exact {
            self.intern_exact(key, hash, conflicts)
        } else {
            self.intern_plain(key, hash, predicted, conflicts)
        }
    }

    /// A plain intern's miss: the base probed (exact: it is frozen) if the
    /// NC is open, then,
    /// under the stripe's lock, the stripe probed again and the numbered
    /// append. Conflicts are found by the next settle. A `predicted` miss,
    /// whose stripe no lock-free probe read, only tries the lock: held, the
    /// stripe is probed lock-free before the wait, so that a hit never
    /// waits for a stripe's lock.
    fn intern_plain(
        &self,
        key: Key<'_>,
        hash: u64,
        predicted: bool,
        conflicts: ConflictSink<'_>,
    ) -> Interned {
        // Refusals in their order: an empty name, then a closed NC (a close
        // closes the base first, then the stripes, under the base's lock).
        let id = key.id()?;
        if !self.base.is_open() {
            return Err(Refusal::Closed);
        }
        if let Some(entry) = self.base.find_by_hash(hash, key.bytes) {
            return Ok((entry.id(), Registered::AlreadyPresent));
        }
        let tried = if predicted {
            self.stripes.try_write(hash)
        } else {
            None
        };
        let mut stripe = match tried {
            Some(stripe) => stripe,
            None => {
                if predicted {
                    if let Some(entry) = self.stripes.find_by_hash(hash, key.bytes) {
                        return Ok((entry.id(), Registered::AlreadyPresent));
                    }
                }
                self.stripes.write(hash)
            }
        };
        if !stripe.is_open() {
            return Err(Refusal::Closed);
        }
        let inserted = if predicted {
            let outcome = match stripe.insert_unless_found(id, key.bytes, hash) {
                Ok(outcome) => outcome,
                Err(refused) => return Err(self.refused(stripe, refused, conflicts)),
            };
            match outcome {
                Ok(inserted) => inserted,
                Err(found) => {
                    self.release(stripe, found.settle, conflicts);
                    return Ok((found.entry.id(), Registered::AlreadyPresent));
                }
            }
        } else {
            let by_bytes = match stripe.find_by_hash(hash, key.bytes) {
                Ok(entry) => return Ok((entry.id(), Registered::AlreadyPresent)),
                Err(by_bytes) => by_bytes,
            };
            match stripe.insert(id, key.bytes, Some(by_bytes)) {
                Ok(inserted) => inserted,
                Err(refused) => return Err(self.refused(stripe, refused, conflicts)),
            }
        };
        self.release(stripe, inserted.settle, conflicts);
        Ok((id, Registered::Inserted))
    }

    /// Releases `stripe`, then settles the NC if the number its append
    /// took (inserted, taken back or refused) asks for it (`settle`).
    fn release(&self, stripe: StripeGuard<'_>, settle: bool, conflicts: ConflictSink<'_>) {
        drop(stripe);
        if settle {
            // On a failure, the next settle takes what this one left.
            let _ = self.settle(conflicts);
        }
    }

    /// The refusal of `stripe`'s append, `refused`, once the guard is
    /// released and, if the number the append spent asks for it, the NC
    /// settled ([`Refused`](crate::raw::Refused)).
    #[cold]
    fn refused(
        &self,
        stripe: StripeGuard<'_>,
        refused: Refused,
        conflicts: ConflictSink<'_>,
    ) -> Refusal {
        let slab_limit = stripe.slab_limit();
        self.release(stripe, refused.settle, conflicts);
        refusal(refused.error, slab_limit)
    }

    /// An intern whose outcome must be exact when it returns (the caller
    /// reads it, or chose the id). Under the stripe's lock, the NC settled:
    /// an entry that holds the id answers. Else the record is appended and
    /// published, the lock released, and the NC settled again: the
    /// caller's record is taken (numbered before that settle's bound), and
    /// a concurrent one of the id with a smaller number wins over it, as it
    /// may. `OutOfMemory` if a settle cannot allocate: before the append
    /// nothing is stored; after it, the string is stored (the next settle
    /// takes it) and the outcome is what could not be read.
    fn intern_exact(&self, key: Key<'_>, hash: u64, conflicts: ConflictSink<'_>) -> Interned {
        let id = key.id()?;
        let mut stripe = self.stripes.write(hash);
        if !stripe.is_open() {
            return Err(Refusal::Closed);
        }
        self.settle(conflicts)?;
        if let Some((_, kept)) = self.find_mapped(id) {
            return Ok((id, compare(kept.bytes(), key.bytes, id, conflicts)));
        }
        // Indexed by its bytes if `id` is the db's id of them. Neither the
        // base nor the stripe holds an entry of these bytes: every entry of
        // both is settled (the stripe's numbered before the settle above,
        // under this lock), and no entry holds the id.
        let by_bytes = (key.source() == IdSource::Hash).then(|| ByBytes::hash(hash));
        let inserted = match stripe.insert(id, key.bytes, by_bytes) {
            Ok(inserted) => inserted,
            Err(refused) => return Err(self.refused(stripe, refused, conflicts)),
        };
        drop(stripe);
        self.settle(conflicts)?;
        let outcome = match self.find_mapped(id) {
            Some((place, _)) if place == Some(inserted.place) => Registered::Inserted,
            // The settle recorded the conflict when it took the record.
            Some((_, kept)) if !crate::raw::bytes_eq(kept.bytes(), key.bytes) => {
                Registered::Conflict
            }
            Some(_) => Registered::AlreadyPresent,
            // Not reached: a settle takes every record published before
            // it, and the caller's stripe has no unpublished one before it.
            None => {
                debug_assert!(false, "a settle left the caller's record");
                Registered::Inserted
            }
        };
        Ok((id, outcome))
    }
}

/// The refusal of an append the stripe refused.
fn refusal(refused: AppendError, slab_limit: usize) -> Refusal {
    match refused {
        AppendError::OutOfMemory => Refusal::OutOfMemory,
        AppendError::Full => Refusal::SlabsExhausted { slabs: slab_limit },
    }
}
