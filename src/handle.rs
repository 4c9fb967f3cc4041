//! `NcHandle`: a db bound to one NC; binding threads to NCs, and pinning them
//! to CPUs with `core_affinity` (feature `pinning`).

use crate::db::InternedStringDb;
use crate::error::{BatchError, Error};
use crate::strategy::{DefaultStrategy, Registered, Strategy};

/// A db bound to one NC: `intern(&str)` needs no NC argument.
///
/// Made by [`InternedStringDb::handle`] or
/// [`InternedStringDb::pin_current_thread`].
///
/// ```
/// use interned_string_db::InternedStringDb;
/// let db = InternedStringDb::new();
/// let nc3 = db.handle(3).unwrap();
/// let id = nc3.intern("span/forward").unwrap();
/// assert_eq!(db.lookup(3, "span/forward"), Some(id));
/// ```
#[derive(Debug)]
pub struct NcHandle<'db, S: Strategy = DefaultStrategy> {
    db: &'db InternedStringDb<S>,
    nc: usize,
    cpu: Option<usize>,
}

impl<S: Strategy> Clone for NcHandle<'_, S> {
    fn clone(&self) -> Self {
        NcHandle { ..*self }
    }
}

impl<'db, S: Strategy> NcHandle<'db, S> {
    /// The NC this handle interns into.
    pub fn nc(&self) -> usize {
        self.nc
    }

    /// The CPU the thread was pinned to, if pinning was asked for and
    /// succeeded.
    pub fn cpu(&self) -> Option<usize> {
        self.cpu
    }

    /// The db.
    pub fn db(&self) -> &'db InternedStringDb<S> {
        self.db
    }

    /// [`InternedStringDb::intern`] into this handle's NC.
    ///
    /// # Errors
    ///
    /// As [`InternedStringDb::intern`].
    #[inline]
    pub fn intern(&self, s: &str) -> Result<u64, Error> {
        self.db.intern(self.nc, s)
    }

    /// [`InternedStringDb::intern_bytes`] into this handle's NC.
    ///
    /// # Errors
    ///
    /// As [`InternedStringDb::intern`].
    #[inline]
    pub fn intern_bytes(&self, bytes: &[u8]) -> Result<u64, Error> {
        self.db.intern_bytes(self.nc, bytes)
    }

    /// [`InternedStringDb::intern_batch`] into this handle's NC.
    ///
    /// # Errors
    ///
    /// As [`InternedStringDb::intern_batch`].
    #[inline]
    pub fn intern_batch<B: AsRef<[u8]>>(
        &self,
        names: &[B],
        ids: &mut [u64],
    ) -> Result<(), BatchError> {
        self.db.intern_batch(self.nc, names, ids)
    }

    /// [`InternedStringDb::intern_with_outcome`] into this handle's NC.
    ///
    /// # Errors
    ///
    /// As [`InternedStringDb::intern`].
    pub fn intern_with_outcome(&self, bytes: &[u8]) -> Result<(u64, Registered), Error> {
        self.db.intern_with_outcome(self.nc, bytes)
    }

    /// [`InternedStringDb::lookup`] in this handle's NC.
    pub fn lookup(&self, s: &str) -> Option<u64> {
        self.db.lookup(self.nc, s)
    }
}

impl<S: Strategy> InternedStringDb<S> {
    /// A handle that interns into NC `nc`.
    ///
    /// # Errors
    ///
    /// [`Error::NcOutOfRange`].
    pub fn handle(&self, nc: usize) -> Result<NcHandle<'_, S>, Error> {
        if nc >= self.ncs() {
            return Err(Error::NcOutOfRange {
                nc,
                ncs: self.ncs(),
            });
        }
        Ok(NcHandle {
            db: self,
            nc,
            cpu: None,
        })
    }

    /// Binds the calling thread, the `thread_index`-th of the caller's
    /// worker threads, to an NC and pins it to a CPU.
    ///
    /// The mapping, documented and stable: the thread gets NC
    /// `thread_index % ncs`, and the NC's threads run on the
    /// `(nc % cpus)`-th CPU this process may use. With at least as many NCs
    /// as threads, every thread has an NC of its own, and NCs share CPUs
    /// round-robin.
    ///
    /// Pinning is best effort: where the process may not set its affinity (a
    /// restricted container) or the CPU list cannot be read, the thread is
    /// still bound to its NC, runs unpinned, a warning is logged, and
    /// [`NcHandle::cpu`] is `None`.
    #[cfg(feature = "pinning")]
    pub fn pin_current_thread(&self, thread_index: usize) -> NcHandle<'_, S> {
        let nc = thread_index % self.ncs();
        NcHandle {
            db: self,
            nc,
            cpu: pin_to_cpu_of(nc),
        }
    }
}

/// Pins the calling thread to the `(slot % cpus)`-th allowed CPU; returns its
/// id, or `None` (with a warning) where that is not possible.
#[cfg(feature = "pinning")]
pub(crate) fn pin_to_cpu_of(slot: usize) -> Option<usize> {
    let Some(cores) = core_affinity::get_core_ids().filter(|c| !c.is_empty()) else {
        log::warn!("cannot read this process's CPU list; running unpinned");
        return None;
    };
    let core = cores[slot % cores.len()];
    if core_affinity::set_for_current(core) {
        Some(core.id)
    } else {
        log::warn!(
            "cannot pin this thread to CPU {} (no affinity rights?); running unpinned",
            core.id
        );
        None
    }
}
