//! The crate's error type.

use core::fmt;

use crate::strategy::shard::Refusal;

/// Why an operation on the interner was refused.
///
/// Every refusal leaves the interner consistent: nothing already stored is
/// lost or changed.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Error {
    /// The empty string cannot be interned (the reference refuses it too; its
    /// id, [`get_id(b"")`](crate::get_id), is still well defined).
    EmptyString,
    /// The NeuronCore index is not below the number of NCs the db was built
    /// with.
    NcOutOfRange {
        /// The index that was asked for.
        nc: usize,
        /// How many NCs the db has.
        ncs: usize,
    },
    /// The NC is closed: it takes no new strings and the snapshot skips it
    /// until it is opened again.
    NcClosed {
        /// The closed NC.
        nc: usize,
    },
    /// Storing the string would take the NC's shard past its byte cap.
    CapReached {
        /// The NC whose cap was reached.
        nc: usize,
        /// The cap, in bytes of string data.
        cap: usize,
        /// Bytes already stored in the shard.
        used: usize,
        /// Bytes the refused string needed.
        needed: usize,
    },
    /// Memory for the entry could not be allocated; nothing was stored.
    OutOfMemory {
        /// The NC whose shard could not grow.
        nc: usize,
        /// Bytes of string data that were to be stored.
        needed: usize,
    },
    /// The NC's shard has as many slabs of strings as it may hold
    /// ([`Config::slab_limit`](crate::Config::slab_limit); the optimistic
    /// strategy's layout names at most
    /// [`OptimisticStrategy::MAX_SLABS`](crate::OptimisticStrategy::MAX_SLABS)),
    /// and the string needs a new one; nothing was stored. Strings that fit
    /// the last slab's room may still be stored.
    SlabsExhausted {
        /// The NC whose shard is full.
        nc: usize,
        /// The limit reached, in slabs.
        slabs: usize,
        /// Bytes of string data that were to be stored.
        needed: usize,
    },
    /// The input is not valid UTF-8 where UTF-8 is required (the C ABI).
    InvalidUtf8,
    /// A db was configured with zero NCs; it needs at least one.
    ZeroNcs,
    /// Memory for a db's NCs and their first tables could not be allocated:
    /// the configuration asks for more than the machine has (or, for the
    /// optimistic strategy, an initial capacity past its largest table).
    ConfigTooLarge {
        /// The NCs asked for.
        ncs: usize,
        /// The entries asked for per NC.
        initial_capacity: usize,
    },
}

impl Error {
    /// The error of a shard's refusal to store `bytes` in NC `nc`.
    pub(crate) fn refused(nc: usize, bytes: &[u8], refusal: Refusal) -> Error {
        match refusal {
            Refusal::EmptyName => Error::EmptyString,
            Refusal::Closed => Error::NcClosed { nc },
            Refusal::CapReached { used, cap } => Error::CapReached {
                nc,
                cap,
                used,
                needed: bytes.len(),
            },
            Refusal::OutOfMemory => Error::OutOfMemory {
                nc,
                needed: bytes.len(),
            },
            Refusal::SlabsExhausted { slabs } => Error::SlabsExhausted {
                nc,
                slabs,
                needed: bytes.len(),
            },
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::EmptyString => f.write_str("the empty string cannot be interned"),
            Error::NcOutOfRange { nc, ncs } => {
                write!(f, "NeuronCore {nc} is out of range (the db has {ncs} NCs)")
            }
            Error::NcClosed { nc } => write!(f, "NeuronCore {nc} is closed"),
            Error::CapReached {
                nc,
                cap,
                used,
                needed,
            } => write!(
                f,
                "NeuronCore {nc}'s shard is full: {used} of {cap} bytes used, {needed} more needed"
            ),
            Error::OutOfMemory { nc, needed } => write!(
                f,
                "out of memory storing {needed} bytes in NeuronCore {nc}'s shard"
            ),
            Error::SlabsExhausted { nc, slabs, needed } => write!(
                f,
                "NeuronCore {nc}'s shard has no slab left for {needed} bytes: it holds its limit of {slabs} slabs"
            ),
            Error::InvalidUtf8 => f.write_str("the input is not valid UTF-8"),
            Error::ZeroNcs => f.write_str("an InternedStringDb needs at least one NC"),
            Error::ConfigTooLarge {
                ncs,
                initial_capacity,
            } => write!(
                f,
                "cannot allocate {ncs} NCs with room for {initial_capacity} entries each"
            ),
        }
    }
}

impl std::error::Error for Error {}

/// Why [`intern_batch`](crate::InternedStringDb::intern_batch) stopped.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum BatchError {
    /// `names` and `ids` differ in length; nothing was interned.
    LengthMismatch {
        /// Names given.
        names: usize,
        /// Room for ids given.
        ids: usize,
    },
    /// Interning the name at `index` failed: the names before it are
    /// interned and their ids written, nothing from `index` on is.
    At {
        /// The position of the name that failed.
        index: usize,
        /// Why it failed.
        error: Error,
    },
}

impl BatchError {
    /// How many names were interned (and ids written) before the batch
    /// stopped.
    pub fn interned(&self) -> usize {
        match self {
            BatchError::LengthMismatch { .. } => 0,
            BatchError::At { index, .. } => *index,
        }
    }
}

impl fmt::Display for BatchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BatchError::LengthMismatch { names, ids } => write!(
                f,
                "a batch of {names} names needs as many ids, not {ids}; nothing was interned"
            ),
            BatchError::At { index, error } => {
                write!(
                    f,
                    "name {index} of the batch: {error} (the names before it are interned)"
                )
            }
        }
    }
}

impl std::error::Error for BatchError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            BatchError::At { error, .. } => Some(error),
            BatchError::LengthMismatch { .. } => None,
        }
    }
}
