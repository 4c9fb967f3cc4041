//! Building a snapshot. Entries are staged once, into the arrays that
//! become the snapshot's (ids, ends, bytes): each into the regions of one of
//! up to 2^8 partitions by the top bits of its id. Ids are uniform hashes,
//! so the partitions are even and regions sized alike from the expected
//! totals are rarely outgrown; what does not fit spills into buffers of the
//! partition's own. Then each partition, small enough to stay in cache, is
//! copied aside, sorted, deduplicated and written back in id order, packed
//! after the partitions before. Only the snapshot's own memory is freshly
//! touched: a page fault costs more than a copy.
//!
//! Large snapshots are finished by two threads, each over its own run of
//! partitions, in its own span of the arrays; the seam is closed after.

use core::ops::Range;

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

/// Entries from which a snapshot is finished by two threads: below it, the
/// second thread's start costs what it saves.
const PARALLEL_FROM: usize = 1 << 16;

/// Marks a staged record's start as in its partition's spill buffer.
const SPILLED: usize = 1 << (usize::BITS - 1);

/// Where one staged entry's bytes are: at `start` in its partition's region,
/// or at `start & !SPILLED` in its spill buffer. Within a partition, records
/// pushed later have a greater `(start, len)`, or equal bytes (both empty).
#[derive(Debug, Clone, Copy)]
struct Staged {
    id: u64,
    start: usize,
    len: usize,
}

/// The entries staged for one range of ids: in a region of the builder's
/// arrays, then (once the region is full) in buffers of its own.
#[derive(Debug, Default)]
struct Part {
    /// The bytes region: its first byte in `Arrays::bytes`, its size, and
    /// the bytes staged there.
    at: usize,
    room: usize,
    used: usize,
    /// The records region: its first slot in `Arrays::ids` and `ends`, its
    /// size, and the records staged there (each an id and its end, relative
    /// to the region: entries are packed in push order).
    first: usize,
    slots: usize,
    count: usize,
    /// What did not fit: bytes, and records starting in them.
    spill: Vec<u8>,
    spilled: Vec<Staged>,
}

impl Part {
    fn entries(&self) -> usize {
        self.count + self.spilled.len()
    }

    fn bytes(&self) -> usize {
        self.used + self.spill.len()
    }
}

/// A snapshot's arrays; while staging, the partitions' regions.
#[derive(Debug, Default)]
struct Arrays {
    ids: Vec<u64>,
    ends: Vec<usize>,
    bytes: Vec<u8>,
}

impl Arrays {
    /// Zeroed, so fresh pages that nothing writes until used.
    fn zeroed(entries: usize, bytes: usize) -> Self {
        Arrays {
            ids: vec![0; entries],
            ends: vec![0; entries],
            bytes: vec![0; bytes],
        }
    }
}

/// Collects entries, then merges them into a [`Snapshot`]. An id pushed more
/// than once keeps the bytes pushed first; different bytes pushed later are
/// reported as conflicts.
#[derive(Debug)]
pub(crate) struct Builder {
    /// The partitions' regions, in partition order: the snapshot's arrays.
    arrays: Arrays,
    parts: Vec<Part>,
    /// An id's partition is `id >> shift`, capped at the last.
    shift: u32,
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
        Builder::with_parts(bits, entries, bytes)
    }

    /// [`with_capacity`](Self::with_capacity) with 2^`bits` partitions.
    fn with_parts(bits: u32, entries: usize, bytes: usize) -> Self {
        let parts = 1usize << bits;
        let share = |total: usize| (total / parts).saturating_add(total / parts / 8);
        let (room, slots) = (share(bytes), share(entries));
        Builder {
            arrays: Arrays::zeroed(slots.saturating_mul(parts), room.saturating_mul(parts)),
            parts: (0..parts)
                .map(|at| Part {
                    at: at * room,
                    room,
                    first: at * slots,
                    slots,
                    ..Part::default()
                })
                .collect(),
            shift: ID_BITS - bits,
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
        let len = bytes.len();
        // Once a partition spills, it spills on, keeping push order.
        if part.spilled.is_empty() && part.count < part.slots && len <= part.room - part.used {
            self.arrays.bytes[part.at + part.used..][..len].copy_from_slice(bytes);
            part.used += len;
            let slot = part.first + part.count;
            self.arrays.ids[slot] = id;
            self.arrays.ends[slot] = part.used;
            part.count += 1;
        } else {
            part.spilled.push(Staged {
                id,
                start: part.spill.len() | SPILLED,
                len,
            });
            part.spill.extend_from_slice(bytes);
        }
    }

    /// Records `conflict` as it is. [`finish`](Self::finish) normalises
    /// what was recorded: if the snapshot holds its id, each of its two
    /// strings that is not the kept one is reported against the kept one;
    /// otherwise (an id a delta delivered earlier) it is reported as it is.
    pub(crate) fn add_conflict(&mut self, conflict: Conflict) {
        self.conflicts.push(conflict);
    }

    /// Counts conflicts that a merged input counted but did not store.
    pub(crate) fn add_conflicts_dropped(&mut self, dropped: u64) {
        self.conflicts_dropped = self.conflicts_dropped.saturating_add(dropped);
    }

    /// The snapshot: sorted by id, each id once with the bytes pushed first.
    pub(crate) fn finish(self) -> Snapshot {
        let staged: usize = self.parts.iter().map(Part::entries).sum();
        let threads = if staged >= PARALLEL_FROM && cfg!(not(any(interner_loom, miri))) {
            2
        } else {
            1
        };
        self.finish_on(threads)
    }

    /// [`finish`](Self::finish) on `threads` threads.
    fn finish_on(self, threads: usize) -> Snapshot {
        let Builder {
            arrays,
            parts,
            shift: _,
            conflicts,
            conflicts_dropped,
        } = self;
        // Spilled entries would be written back past their region, over the
        // next partition's: then the partitions are written out to new
        // arrays instead (rare for hashed ids).
        let spilled = parts.iter().any(|p| !p.spilled.is_empty());
        let (source, mut out) = if spilled {
            let entries = parts.iter().map(Part::entries).sum();
            let bytes = parts.iter().map(Part::bytes).sum();
            (arrays, Arrays::zeroed(entries, bytes))
        } else {
            (Arrays::default(), arrays)
        };
        let source = spilled.then_some(&source);

        // Each thread packs its run of partitions at the start of its span
        // of the arrays; the spans are then joined.
        let mut workers = Vec::new();
        {
            let (mut ids, mut ends, mut bytes) =
                (&mut out.ids[..], &mut out.ends[..], &mut out.bytes[..]);
            let (mut entry_offset, mut byte_offset) = (0, 0);
            for run in runs(&parts, threads) {
                let parts = &parts[run];
                let (entries, span) = match (parts.first(), parts.last()) {
                    _ if spilled => (
                        parts.iter().map(Part::entries).sum(),
                        parts.iter().map(Part::bytes).sum(),
                    ),
                    (Some(first), Some(last)) => (
                        last.first + last.slots - first.first,
                        last.at + last.room - first.at,
                    ),
                    _ => (0, 0),
                };
                let (worker_ids, rest) = ids.split_at_mut(entries);
                ids = rest;
                let (worker_ends, rest) = ends.split_at_mut(entries);
                ends = rest;
                let (worker_bytes, rest) = bytes.split_at_mut(span);
                bytes = rest;
                workers.push(Worker {
                    parts,
                    source,
                    offsets: (entry_offset, byte_offset),
                    ids: worker_ids,
                    ends: worker_ends,
                    bytes: worker_bytes,
                    filled: (0, 0),
                    contested: Vec::new(),
                });
                entry_offset += entries;
                byte_offset += span;
            }
            in_parallel(&mut workers, Worker::fill);
        }
        let mut contested = Vec::new();
        let (mut to_entry, mut to_byte) = (0, 0);
        let (mut from_entry, mut from_byte) = (0, 0);
        let outputs: Vec<_> = workers
            .into_iter()
            .map(|w| {
                contested.extend(w.contested);
                (w.ids.len(), w.bytes.len(), w.filled)
            })
            .collect();
        let Arrays {
            mut ids,
            mut ends,
            mut bytes,
        } = out;
        for (entries_span, bytes_span, (n, b)) in outputs {
            ids.copy_within(from_entry..from_entry + n, to_entry);
            ends.copy_within(from_entry..from_entry + n, to_entry);
            bytes.copy_within(from_byte..from_byte + b, to_byte);
            if to_byte != 0 {
                for end in &mut ends[to_entry..to_entry + n] {
                    *end += to_byte;
                }
            }
            (to_entry, to_byte) = (to_entry + n, to_byte + b);
            (from_entry, from_byte) = (from_entry + entries_span, from_byte + bytes_span);
        }
        // Shrinking in place: `realloc` neither moves a block that shrinks
        // nor, for a large one, copies (it remaps).
        ids.truncate(to_entry);
        ids.shrink_to_fit();
        ends.truncate(to_entry);
        ends.shrink_to_fit();
        bytes.truncate(to_byte);
        bytes.shrink_to_fit();
        let mut snapshot = Snapshot {
            ids,
            ends,
            bytes,
            conflicts: Vec::new(),
            conflicts_dropped,
        };
        snapshot.conflicts = normalised(&snapshot, conflicts, contested);
        snapshot
    }
}

/// One thread's run of partitions, and its spans of the output arrays.
struct Worker<'a> {
    parts: &'a [Part],
    /// The builder's arrays, if the output is others; else the regions are
    /// in the spans, which start at `offsets` (entries, bytes) in them.
    source: Option<&'a Arrays>,
    offsets: (usize, usize),
    ids: &'a mut [u64],
    /// Relative to the start of `bytes`.
    ends: &'a mut [usize],
    bytes: &'a mut [u8],
    /// Entries and bytes written.
    filled: (usize, usize),
    /// Bytes pushed under an id beside its kept bytes.
    contested: Vec<(u64, Box<[u8]>)>,
}

impl Worker<'_> {
    /// Copies each partition's regions aside, sorts its records, keeps the
    /// first pushed of each id (contesting other bytes pushed under it) and
    /// writes it back, packed after the partitions before. Without spills,
    /// the writes never pass the partition's regions (what is written is at
    /// most what was staged before them), so nothing is overwritten before
    /// it is read.
    fn fill(&mut self) {
        let (mut n, mut b) = (0, 0);
        let mut records = Vec::new();
        let mut order = Vec::new();
        let mut region = Vec::new();
        for part in self.parts {
            let (ids, ends, bytes) = match self.source {
                Some(source) => (
                    &source.ids[part.first..],
                    &source.ends[part.first..],
                    &source.bytes[part.at..],
                ),
                None => (
                    &self.ids[part.first - self.offsets.0..],
                    &self.ends[part.first - self.offsets.0..],
                    &self.bytes[part.at - self.offsets.1..],
                ),
            };
            region.clear();
            region.extend_from_slice(&bytes[..part.used]);
            records.clear();
            let mut start = 0;
            for (&id, &end) in ids.iter().zip(ends).take(part.count) {
                records.push(Staged {
                    id,
                    start,
                    len: end - start,
                });
                start = end;
            }
            records.extend_from_slice(&part.spilled);
            sort_order(&mut records, &mut order);
            let bytes_of = |r: &Staged| {
                let start = r.start & !SPILLED;
                let from = if r.start & SPILLED == 0 {
                    &region
                } else {
                    &part.spill
                };
                &from[start..start + r.len]
            };
            let mut kept: Option<&Staged> = None;
            for record in order.iter().map(|&at| &records[at as usize]) {
                let bytes = bytes_of(record);
                if let Some(first) = kept.filter(|first| first.id == record.id) {
                    if bytes != bytes_of(first) {
                        self.contested.push((record.id, bytes.into()));
                    }
                    continue;
                }
                self.bytes[b..b + bytes.len()].copy_from_slice(bytes);
                b += bytes.len();
                self.ids[n] = record.id;
                self.ends[n] = b;
                n += 1;
                kept = Some(record);
            }
        }
        self.filled = (n, b);
    }
}

/// Bits of a packed sort key that hold the record's index in push order.
const INDEX_BITS: u32 = 22;
const INDEX_MASK: u64 = (1 << INDEX_BITS) - 1;

/// Fills `order` with the indexes of `records` in id order, equal ids in
/// push order (so the first pushed comes first).
///
/// A partition's hashed ids share their top bits, so the rest of the id and
/// the index fit in one `u64` key: the sort then moves and compares one
/// integer per record, not a 24-byte record by three fields. Otherwise (a
/// caller's wide ids, or more records than the index holds) the records
/// themselves are sorted.
fn sort_order(records: &mut [Staged], order: &mut Vec<u64>) {
    const ID_LOW: u32 = u64::BITS - INDEX_BITS;
    order.clear();
    let high = records.first().map_or(0, |r| r.id >> ID_LOW);
    let packable =
        records.len() <= INDEX_MASK as usize && records.iter().all(|r| r.id >> ID_LOW == high);
    if packable {
        order.extend(
            records
                .iter()
                .zip(0..)
                .map(|(r, index)| r.id << INDEX_BITS | index),
        );
        order.sort_unstable();
        for key in order.iter_mut() {
            *key &= INDEX_MASK;
        }
    } else {
        // Push order is `(start, len)` order: spilled starts are marked
        // greater.
        records.sort_unstable_by_key(|r| (r.id, r.start, r.len));
        order.extend(0..records.len() as u64);
    }
}

/// `parts` split into `count` runs of about equal staged bytes.
fn runs(parts: &[Part], count: usize) -> Vec<Range<usize>> {
    let weight = |p: &Part| p.bytes() + p.entries();
    let total: usize = parts.iter().map(weight).sum();
    let mut runs = Vec::with_capacity(count);
    let (mut start, mut sum) = (0, 0);
    for (at, part) in parts.iter().enumerate() {
        sum += weight(part);
        let next = runs.len() + 1;
        if next < count && sum * count >= total * next {
            runs.push(start..at + 1);
            start = at + 1;
        }
    }
    runs.push(start..parts.len());
    runs
}

/// Calls `f` on every item, each on a thread of its own (the first on this
/// one) when there are several.
fn in_parallel<T: Send>(items: &mut [T], f: impl Fn(&mut T) + Sync) {
    let Some((first, rest)) = items.split_first_mut() else {
        return;
    };
    if rest.is_empty() {
        return f(first);
    }
    std::thread::scope(|scope| {
        let f = &f;
        for item in rest {
            scope.spawn(move || f(item));
        }
        f(first);
    });
}

/// The snapshot's conflicts: those `reported` by inputs (each of their
/// strings that is not the kept one, against the kept one; as they are for
/// an id the snapshot lacks) and the `contested` bytes, against the kept
/// bytes. Sorted, each once.
fn normalised(
    snapshot: &Snapshot,
    reported: Vec<Conflict>,
    mut contested: Vec<(u64, Box<[u8]>)>,
) -> Vec<Conflict> {
    let mut found = Vec::new();
    for c in reported {
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
    found.sort_unstable();
    found.dedup();
    found
}

#[cfg(test)]
mod tests;
