//! How a db is built: [`Config`] and its defaults.

use crate::id::ID_MASK;
use crate::strategy::shard::ShardConfig;

/// The number of NCs a db has unless configured otherwise (the reference's
/// `CONTEXTS[256]`).
pub const DEFAULT_NCS: usize = 256;

/// Bytes of conflicts each NC stores unless configured otherwise
/// ([`Config::conflict_budget`]): 64 KiB, about 340 conflicts between names
/// of 60 bytes, so 16 MiB for 256 NCs at worst.
pub const DEFAULT_CONFLICT_BUDGET: usize = 64 * 1024;

/// How a db is built: number of NCs, per-NC byte cap, initial capacity,
/// per-NC conflict budget.
///
/// ```
/// use interned_string_db::{Config, InternedStringDb};
/// let db: InternedStringDb = InternedStringDb::with_config(Config::new().ncs(8).byte_cap(1 << 20));
/// assert_eq!(db.ncs(), 8);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Config {
    pub(crate) ncs: usize,
    pub(crate) byte_cap: Option<usize>,
    pub(crate) initial_capacity: usize,
    pub(crate) conflict_budget: usize,
    pub(crate) slab_limit: Option<usize>,
    pub(crate) id_mask: u64,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            ncs: DEFAULT_NCS,
            byte_cap: None,
            initial_capacity: 0,
            conflict_budget: DEFAULT_CONFLICT_BUDGET,
            slab_limit: None,
            id_mask: ID_MASK,
        }
    }
}

impl Config {
    /// The defaults: 256 NCs, no byte cap, shards that start empty, a
    /// conflict budget of [`DEFAULT_CONFLICT_BUDGET`] bytes per NC.
    pub fn new() -> Self {
        Self::default()
    }

    /// The number of NCs (shards). Must be at least 1
    /// ([`Error::ZeroNcs`](crate::Error::ZeroNcs) otherwise).
    pub fn ncs(mut self, ncs: usize) -> Self {
        self.ncs = ncs;
        self
    }

    /// Caps the bytes of string data each NC's shard may hold; an intern that
    /// would go past it fails with [`Error::CapReached`](crate::Error::CapReached) and stores nothing.
    /// `None` (the default) means no cap.
    pub fn byte_cap(mut self, cap: impl Into<Option<usize>>) -> Self {
        self.byte_cap = cap.into();
        self
    }

    /// Entries each shard can hold before it first grows, allocated up front
    /// for every NC (after a [`reset`](crate::InternedStringDb::reset), at
    /// each NC's next write). With the default, 0, an NC's context is made
    /// by its first write, and an NC never written to costs a pointer. A
    /// capacity the allocator refuses, one whose tables alone (8 bytes an
    /// entry at least) would take more than the machine's memory (Linux), or,
    /// for the optimistic strategy, one past 5 × 2^31 entries, its largest
    /// index, is
    /// [`Error::ConfigTooLarge`](crate::Error::ConfigTooLarge) from
    /// [`try_with_config`](crate::InternedStringDb::try_with_config): never clamped,
    /// so that a db never silently has less room than asked for.
    pub fn initial_capacity(mut self, entries: usize) -> Self {
        self.initial_capacity = entries;
        self
    }

    /// Caps the memory each NC's conflict log may take: the bytes of the
    /// conflicting strings (each rejected string, and each contested id's
    /// kept string once) plus 128 bytes of bookkeeping per string. Past it, a
    /// new conflict still keeps the first string and still returns
    /// [`Registered::Conflict`](crate::Registered::Conflict), but is counted in
    /// [`conflicts_dropped`](crate::InternedStringDb::conflicts_dropped) (and
    /// [`Snapshot::conflicts_dropped`](crate::Snapshot::conflicts_dropped)) instead of being stored. Conflicts do
    /// not count against [`byte_cap`](Self::byte_cap). `0` stores none. A
    /// conflict whose strings the allocator refuses to copy (memory running
    /// out) is counted there too, within the budget or not: recording a
    /// conflict never aborts.
    pub fn conflict_budget(mut self, bytes: usize) -> Self {
        self.conflict_budget = bytes;
        self
    }

    /// Holds each NC of the [optimistic strategy](crate::OptimisticStrategy)
    /// to at most `slabs` slabs of strings. Its log stores strings in slabs
    /// of 16 KiB, packed, so a string of more than about 8 KiB has its slab
    /// to itself, and a larger one a slab of its size (an NC with no limit
    /// opens its first four slabs at 1, 2, 4 and 8 KiB, so that an NC of a
    /// few names holds little; with a limit every slab is whole); a 32-bit position names at most
    /// [`OptimisticStrategy::MAX_SLABS`](crate::OptimisticStrategy::MAX_SLABS)
    /// slabs (262,143: about 4 GiB of strings below that size, or 262,143
    /// strings above it), which is the limit with `None` (the default) and
    /// the most any value gives. An intern that needs a slab past the limit
    /// fails with [`Error::SlabsExhausted`](crate::Error::SlabsExhausted)
    /// and stores nothing; the strings already there stay. Bound an NC by
    /// [`byte_cap`](Self::byte_cap) first: this bound is for the layout's
    /// own limit, and for tests that reach it. Other strategies have no
    /// slabs and ignore it.
    pub fn slab_limit(mut self, slabs: impl Into<Option<usize>>) -> Self {
        self.slab_limit = slabs.into();
        self
    }

    /// **Testing only** (feature `test-util`, for this workspace's tests).
    /// Narrows the ids this db computes to `((get_id(bytes) - 1) & mask) +
    /// 1`, so that tests can produce id collisions on demand (real 50-bit
    /// collisions are rare). A db built with a narrowed mask is not
    /// compatible with [`get_id`](crate::get_id).
    #[cfg(feature = "test-util")]
    pub fn narrow_id_mask_for_tests(mut self, mask: u64) -> Self {
        self.id_mask = mask & ID_MASK;
        self
    }

    /// Whether the tables made up front (`ncs × initial_capacity` entries,
    /// at least [`INDEX_BYTES_AN_ENTRY`] each, whatever the strategy) fit
    /// the machine's memory, where it is known (Linux's `/proc/meminfo`).
    /// Past it, an allocator that overcommits would accept the tables and
    /// the process be killed as they were written, where
    /// [`Error::ConfigTooLarge`](crate::Error::ConfigTooLarge) is the
    /// answer a caller can act on.
    pub(crate) fn fits_the_machine(&self) -> bool {
        if self.initial_capacity == 0 {
            // Nothing made up front: nothing to read the machine for.
            return true;
        }
        let Some(bytes) = self
            .ncs
            .checked_mul(self.initial_capacity)
            .and_then(|entries| entries.checked_mul(INDEX_BYTES_AN_ENTRY))
        else {
            return false;
        };
        machine_memory().is_none_or(|memory| bytes as u64 <= memory)
    }

    pub(crate) fn shard_config(&self) -> ShardConfig {
        ShardConfig {
            byte_cap: self.byte_cap.unwrap_or(usize::MAX),
            initial_capacity: self.initial_capacity,
            slab_limit: self.slab_limit.unwrap_or(usize::MAX),
        }
    }
}

/// The least an index of any strategy takes an entry: a slot word.
const INDEX_BYTES_AN_ENTRY: usize = 8;

/// The machine's memory in bytes (`MemTotal` of `/proc/meminfo`), if this
/// system says (not under Miri, whose isolation refuses the read).
fn machine_memory() -> Option<u64> {
    if cfg!(miri) {
        return None;
    }
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = info.lines().find(|line| line.starts_with("MemTotal:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    kib.checked_mul(1024)
}
