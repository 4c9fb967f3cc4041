//! `intern_batch`: many names into one NC, their lookups pipelined and
//! their misses registered together.

use crate::db::InternedStringDb;
use crate::error::{BatchError, Error};
use crate::nc::NcContext;
use crate::strategy::shard::{FastPath, IdSource, Key};
use crate::strategy::Strategy;

/// Names looked up together: enough to overlap many misses, few enough that
/// the batch's lines stay in L1.
const STEP: usize = 64;

impl<S: Strategy> InternedStringDb<S> {
    /// Interns every name of `names` into NC `nc`, in order, writing their
    /// ids to `ids`: the same ids and effects as calling
    /// [`intern_bytes`](Self::intern_bytes) on each name in turn, but the
    /// lookups of a batch are pipelined so that their cache misses overlap
    /// (for the optimistic strategy: every name hashed and its bucket
    /// prefetched, then every candidate entry prefetched, then the compares),
    /// and the names they missed are registered together: their ids are
    /// computed first, and the optimistic strategy then takes the NC's
    /// writer lock once for the misses of up to 64 names, where `intern`
    /// takes it for each. Takes `&[&str]`, `&[&[u8]]`, `&[String]`, ...
    ///
    /// ```
    /// use interned_string_db::{get_id, InternedStringDb};
    /// let db = InternedStringDb::new();
    /// let names = ["span/forward", "span/backward", "span/forward"];
    /// let mut ids = [0; 3];
    /// db.intern_batch(0, &names, &mut ids).unwrap();
    /// assert_eq!(ids, names.map(|n| get_id(n.as_bytes())));
    /// ```
    ///
    /// # Errors
    ///
    /// [`BatchError::LengthMismatch`] if `ids` is not as long as `names`
    /// (nothing is interned); [`BatchError::At`] with the index of the first
    /// name that failed and why (as [`intern`](Self::intern) fails): the
    /// names before it are interned and `ids[..index]` written; `ids[index..]`
    /// may hold anything.
    pub fn intern_batch<B: AsRef<[u8]>>(
        &self,
        nc: usize,
        names: &[B],
        ids: &mut [u64],
    ) -> Result<(), BatchError> {
        if names.len() != ids.len() {
            return Err(BatchError::LengthMismatch {
                names: names.len(),
                ids: ids.len(),
            });
        }
        if names.is_empty() {
            return Ok(());
        }
        // As `intern` of the first name: an NC with no context yet (or out
        // of range) refuses an empty first name before it is made.
        let ctx = match self.context(nc) {
            Some(ctx) => ctx,
            None => self
                .first_context(nc, names[0].as_ref())
                .map_err(|error| BatchError::At { index: 0, error })?,
        };
        for (step, (names, ids)) in names.chunks(STEP).zip(ids.chunks_mut(STEP)).enumerate() {
            ctx.shard.find_hits(names, ids);
            if ids.contains(&0) {
                self.intern_misses(ctx, nc, step * STEP, names, ids)?;
            }
        }
        Ok(())
    }

    /// The names of one step of [`intern_batch`](Self::intern_batch) that
    /// its lookups missed (their ids 0), in order up to the first empty
    /// name: their ids computed, outside any lock, then registered
    /// together. `first` is the step's index in the batch. Out of line, so
    /// that a step whose names all hit does not set up its arrays.
    #[inline(never)]
    fn intern_misses<B: AsRef<[u8]>>(
        &self,
        ctx: &NcContext<S>,
        nc: usize,
        first: usize,
        names: &[B],
        ids: &mut [u64],
    ) -> Result<(), BatchError> {
        let mut misses = [Key::default(); STEP];
        let mut indexes = [0; STEP];
        let mut missed = 0;
        let mut empty = None;
        for (i, (name, id)) in names.iter().zip(ids.iter_mut()).enumerate() {
            if *id != 0 {
                continue;
            }
            let bytes = name.as_ref();
            if bytes.is_empty() {
                empty = Some(i);
                break;
            }
            *id = self.id_of(bytes);
            misses[missed] = Key::with_id(bytes, *id, IdSource::Hash);
            indexes[missed] = i;
            missed += 1;
        }
        let misses = &misses[..missed];
        ctx.shard
            .intern_misses(misses, self.conflict_sink(ctx, nc))
            .map_err(|(at, refusal)| BatchError::At {
                index: first + indexes[at],
                error: Error::refused(nc, misses[at].bytes, refusal),
            })?;
        match empty {
            Some(i) => Err(BatchError::At {
                index: first + i,
                error: Error::EmptyString,
            }),
            None => Ok(()),
        }
    }
}
