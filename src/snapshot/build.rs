//! Building a snapshot. Entries are staged as they are visited, each into
//! one of up to 2^8 partitions by the top bits of its id (ids are
//! uniform hashes, so the partitions are even); then each partition, small
//! enough to stay in cache, is sorted, deduplicated and copied in id order
//! into the snapshot's one buffer. Every byte is copied twice, and no step
//! reads memory at random beyond a partition.

use super::Snapshot;
use crate::conflict::Conflict;
use crate::id::ID_MASK;

/// At most 2^8 partitions: 10^6 entries of 40 bytes make partitions of about
/// 160 KB, and the staging writes stay in few enough streams for the TLB.
const MAX_PART_BITS: u32 = 8;

/// Entries a partition is sized for: fewer partitions for small snapshots,
/// whose cost would otherwise be the partitions' own.
const ENTRIES_PER_PART: usize = 4096;

/// Hashed ids have 50 bits: the partition is their top bits. Wider ids (only
/// a caller's, through `register`) all go to the last partition, narrower
/// ones (tests) to the first: slower, never wrong, since partitions stay in
/// id order.
const ID_BITS: u32 = ID_MASK.count_ones();

/// Where one staged entry's bytes are in its partition's buffer.
#[derive(Debug, Clone, Copy)]
struct Staged {
    id: u64,
    start: usize,
    len: usize,
}

/// The entries staged for one range of ids.
#[derive(Debug, Default)]
struct Part {
    bytes: Vec<u8>,
    records: Vec<Staged>,
}

impl Part {
    fn bytes_of(&self, record: &Staged) -> &[u8] {
        &self.bytes[record.start..record.start + record.len]
    }

    /// Sorts by id, keeping the first staged of each id and contesting other
    /// bytes staged under it.
    fn sort_and_dedup(&mut self, contested: &mut Vec<(u64, Box<[u8]>)>) {
        // Stable: of equal ids, the first staged comes first.
        self.records.sort_by_key(|r| r.id);
        let bytes = &self.bytes;
        let bytes_of = |r: &Staged| &bytes[r.start..r.start + r.len];
        self.records.dedup_by(|later, first| {
            if later.id != first.id {
                return false;
            }
            if bytes_of(later) != bytes_of(first) {
                contested.push((later.id, bytes_of(later).into()));
            }
            true
        });
    }
}

/// Collects entries, then merges them into a [`Snapshot`]. An id pushed more
/// than once keeps the bytes pushed first; different bytes pushed later are
/// reported as conflicts.
#[derive(Debug)]
pub(crate) struct Builder {
    parts: Vec<Part>,
    /// An id's partition is `id >> shift`, capped at the last.
    shift: u32,
    /// Bytes staged under an id beside its kept bytes.
    contested: Vec<(u64, Box<[u8]>)>,
    /// Conflicts from elsewhere (conflict logs, merged snapshots), to be
    /// normalised to the kept bytes.
    conflicts: Vec<Conflict>,
    conflicts_dropped: u64,
}

impl Default for Builder {
    fn default() -> Self {
        Builder::with_capacity(0, 0)
    }
}

impl Builder {
    /// A builder with room for about `entries` entries of `bytes` bytes in
    /// all (spread evenly, with an eighth to spare).
    pub(crate) fn with_capacity(entries: usize, bytes: usize) -> Self {
        let bits = (entries / ENTRIES_PER_PART)
            .checked_next_power_of_two()
            .map_or(MAX_PART_BITS, |parts| parts.trailing_zeros())
            .min(MAX_PART_BITS);
        let parts = 1 << bits;
        let share = |total: usize| (total / parts).saturating_add(total / parts / 8);
        Builder {
            shift: ID_BITS - bits,
            parts: (0..parts)
                .map(|_| Part {
                    bytes: Vec::with_capacity(share(bytes)),
                    records: Vec::with_capacity(share(entries)),
                })
                .collect(),
            contested: Vec::new(),
            conflicts: Vec::new(),
            conflicts_dropped: 0,
        }
    }

    /// Adds an entry.
    #[inline]
    pub(crate) fn push(&mut self, id: u64, bytes: &[u8]) {
        let at = usize::try_from(id >> self.shift).map_or(usize::MAX, |at| at);
        let last = self.parts.len() - 1;
        let part = &mut self.parts[at.min(last)];
        part.records.push(Staged {
            id,
            start: part.bytes.len(),
            len: bytes.len(),
        });
        part.bytes.extend_from_slice(bytes);
    }

    /// Reports `conflict`, normalised: if the snapshot holds its id, each of
    /// its two strings that is not the kept one is reported against the kept
    /// one; otherwise (an id a delta delivered earlier) it is reported as it
    /// is.
    pub(crate) fn add_conflict(&mut self, conflict: Conflict) {
        self.conflicts.push(conflict);
    }

    /// Counts conflicts that a merged input counted but did not store.
    pub(crate) fn add_conflicts_dropped(&mut self, dropped: u64) {
        self.conflicts_dropped = self.conflicts_dropped.saturating_add(dropped);
    }

    /// The snapshot: sorted by id, each id once with the bytes pushed first.
    pub(crate) fn finish(self) -> Snapshot {
        let Builder {
            parts,
            shift: _,
            mut contested,
            conflicts,
            conflicts_dropped,
        } = self;
        // Sized for every entry staged; duplicates leave spare room, given
        // back below (for a large buffer, `realloc` remaps without copying).
        let entries = parts.iter().map(|p| p.records.len()).sum();
        let total = parts.iter().map(|p| p.bytes.len()).sum();
        let mut snapshot = Snapshot {
            ids: Vec::with_capacity(entries),
            ends: Vec::with_capacity(entries),
            bytes: Vec::with_capacity(total),
            conflicts: Vec::new(),
            conflicts_dropped,
        };
        // Each partition sorted, then copied while its records are in cache.
        for mut part in parts {
            part.sort_and_dedup(&mut contested);
            for record in &part.records {
                snapshot.bytes.extend_from_slice(part.bytes_of(record));
                snapshot.ids.push(record.id);
                snapshot.ends.push(snapshot.bytes.len());
            }
        }
        snapshot.ids.shrink_to_fit();
        snapshot.ends.shrink_to_fit();
        snapshot.bytes.shrink_to_fit();
        let mut found = Vec::new();
        for c in conflicts {
            match snapshot.get(c.id) {
                Some(_) => {
                    contested.push((c.id, c.kept));
                    contested.push((c.id, c.rejected));
                }
                None => found.push(c),
            }
        }
        found.extend(contested.into_iter().filter_map(|(id, rejected)| {
            let kept = snapshot.get(id)?;
            (*kept != *rejected).then(|| Conflict {
                id,
                kept: kept.into(),
                rejected,
            })
        }));
        let mut conflicts = found;
        conflicts.sort_unstable();
        conflicts.dedup();
        snapshot.conflicts = conflicts;
        snapshot
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_of_every_width_come_out_sorted() {
        let n: u64 = if cfg!(miri) { 300 } else { 20_000 };
        // Hashed ids, full-width caller ids and narrowed test ids, each
        // pushed twice (the second time with other bytes, to be contested).
        // One partition, and the most.
        let most = || Builder {
            parts: (0..1 << MAX_PART_BITS).map(|_| Part::default()).collect(),
            shift: ID_BITS - MAX_PART_BITS,
            ..Builder::default()
        };
        let builders: [fn() -> Builder; 2] = [Builder::default, most];
        for (spread, new) in [ID_MASK, u64::MAX, 0xFF]
            .into_iter()
            .flat_map(|spread| builders.map(|new| (spread, new)))
        {
            let mut builder = new();
            let mut state = 0x9E37_79B9_7F4A_7C15u64;
            let mut expected = std::collections::BTreeMap::new();
            for i in 0..n {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                let id = state & spread;
                let bytes = i.to_le_bytes();
                builder.push(id, &bytes);
                expected.entry(id).or_insert(bytes);
            }
            let snapshot = builder.finish();
            let got: Vec<(u64, &[u8])> = snapshot.iter().collect();
            let want: Vec<(u64, &[u8])> = expected.iter().map(|(&id, b)| (id, &b[..])).collect();
            assert_eq!(got, want, "spread {spread:#x}");
            assert_eq!(snapshot.conflicts().len() as u64, n - want.len() as u64);
        }
    }

    #[test]
    fn first_pushed_is_kept_and_later_bytes_conflict() {
        let mut builder = Builder::default();
        builder.push(2, b"two");
        builder.push(1, b"one");
        builder.push(2, b"deux");
        builder.push(1, b"one");
        builder.add_conflict(Conflict {
            id: 1,
            kept: b"uno"[..].into(),
            rejected: b"one"[..].into(),
        });
        builder.add_conflict(Conflict {
            id: 9,
            kept: b"absent"[..].into(),
            rejected: b"gone"[..].into(),
        });
        let snapshot = builder.finish();
        let entries: Vec<(u64, &[u8])> = snapshot.iter().collect();
        assert_eq!(entries, [(1, &b"one"[..]), (2, &b"two"[..])]);
        let conflicts: Vec<(u64, &[u8], &[u8])> = snapshot
            .conflicts()
            .iter()
            .map(|c| (c.id, &*c.kept, &*c.rejected))
            .collect();
        assert_eq!(
            conflicts,
            [
                (1, &b"one"[..], &b"uno"[..]),
                (2, b"two", b"deux"),
                (9, b"absent", b"gone")
            ]
        );
        assert_eq!(snapshot.string_bytes(), 6);
    }

    #[test]
    fn empty_entries_keep_their_place() {
        let mut builder = Builder::default();
        builder.push(3, b"c");
        builder.push(1, b"");
        builder.push(2, b"bb");
        let snapshot = builder.finish();
        assert_eq!(snapshot.get(1), Some(&b""[..]));
        assert_eq!(snapshot.get(2), Some(&b"bb"[..]));
        assert_eq!(snapshot.get(3), Some(&b"c"[..]));
        assert_eq!(snapshot.get(4), None);
    }
}
