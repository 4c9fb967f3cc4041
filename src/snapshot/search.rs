//! Finding an id among a snapshot's ids, sorted increasing: in memory
//! ([`Snapshot`](super::Snapshot)) and in a mapped file
//! ([`MappedSnapshot`](super::MappedSnapshot)). Ids are hashes, uniform
//! over their range, so the search interpolates first, then bisects.

/// Interpolation steps a lookup takes before it falls back to bisection:
/// hashed ids are uniform, so an interpolated guess lands within about
/// √E records of the id, and a second within a few. A bisection of 10^7
/// ids takes 24 probes, most of them cache and TLB misses.
const INTERPOLATION_STEPS: usize = 4;

/// The position of `id` among the `entries` ids that `id_at` reads
/// (`id_at(i)` the `i`-th, for `i < entries`), if a search finds it: the
/// ids sorted increasing, it does exactly when one of them is `id`. In any
/// order it reads only positions below `entries` and returns only one that
/// holds `id` (it may then miss one). At most [`INTERPOLATION_STEPS`]
/// interpolated probes narrow the range; bisection finishes it, so a
/// search takes O(log E) probes whatever the ids' spread.
pub(super) fn find(entries: usize, id: u64, id_at: impl Fn(usize) -> u64) -> Option<usize> {
    let (mut low, mut high) = (0, entries);
    for _ in 0..INTERPOLATION_STEPS {
        if high - low < 16 {
            break;
        }
        let (first, last) = (id_at(low), id_at(high - 1));
        // Unsorted ids may have `first > last`: then no id is in between.
        if id < first || id > last {
            return None;
        }
        // `first <= id <= last`: the guess is in `low..high`.
        let span = u128::from((last - first).max(1));
        let offset = u128::from(id - first) * (high - 1 - low) as u128 / span;
        let guess = low + offset as usize;
        match id_at(guess).cmp(&id) {
            core::cmp::Ordering::Equal => return Some(guess),
            core::cmp::Ordering::Less => low = guess + 1,
            core::cmp::Ordering::Greater => high = guess,
        }
    }
    while low < high {
        let middle = low + (high - low) / 2;
        match id_at(middle).cmp(&id) {
            core::cmp::Ordering::Equal => return Some(middle),
            core::cmp::Ordering::Less => low = middle + 1,
            core::cmp::Ordering::Greater => high = middle,
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::find;

    /// Agrees with a bisection of the slice for every id in it and for ids
    /// between, before and after them.
    fn agrees(ids: &[u64]) {
        let search = |id: u64| find(ids.len(), id, |at| ids[at]);
        for (at, &id) in ids.iter().enumerate() {
            assert_eq!(search(id), Some(at), "id {id} at {at}");
            for absent in [id.wrapping_sub(1), id + 1] {
                assert_eq!(
                    search(absent),
                    ids.binary_search(&absent).ok(),
                    "id {absent}"
                );
            }
        }
        assert_eq!(search(0), ids.binary_search(&0).ok());
        assert_eq!(search(u64::MAX), ids.binary_search(&u64::MAX).ok());
    }

    #[test]
    fn finds_every_id_however_they_are_spread() {
        agrees(&[]);
        agrees(&[7]);
        // Uniform, as hashed ids are.
        let mut state = 0x9E37_79B9_7F4A_7C15_u64;
        let mut uniform: Vec<u64> = (0..5_000)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                (state >> 14) + 1
            })
            .collect();
        uniform.sort_unstable();
        uniform.dedup();
        agrees(&uniform);
        // Skewed: dense runs, one far outlier, exponential gaps (the
        // interpolation guesses badly; bisection still finishes).
        let mut skewed: Vec<u64> = (1..2_000).chain([1 << 49]).collect();
        skewed.extend((0..40).map(|shift| (1u64 << 50) + (1u64 << shift)));
        skewed.sort_unstable();
        skewed.dedup();
        agrees(&skewed);
    }

    #[test]
    fn unsorted_ids_are_read_in_bounds_and_never_misreported() {
        let ids: Vec<u64> = (0..100u64).map(|i| (i * 7919) % 101).collect();
        for id in 0..110 {
            if let Some(at) = find(ids.len(), id, |at| ids[at]) {
                assert_eq!(ids[at], id);
            }
        }
    }
}
