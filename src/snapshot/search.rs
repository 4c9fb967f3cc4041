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
    use core::cell::Cell;

    use super::super::xorshift;
    use super::{find, INTERPOLATION_STEPS};

    /// `find` over `ids`, counting the ids it reads into `probes`.
    fn search(ids: &[u64], id: u64, probes: &Cell<usize>) -> Option<usize> {
        find(ids.len(), id, |at| {
            probes.set(probes.get() + 1);
            ids[at]
        })
    }

    /// Agrees with a bisection of the sorted slice for every id in it and
    /// for ids between, before and after them, each search reading at
    /// most 3 ids an interpolation step and then a bisection's.
    fn agrees(ids: &[u64]) {
        let bound = 3 * INTERPOLATION_STEPS + (usize::BITS - ids.len().leading_zeros()) as usize;
        let check = |id: u64| {
            let probes = Cell::new(0);
            assert_eq!(
                search(ids, id, &probes),
                ids.binary_search(&id).ok(),
                "id {id}"
            );
            assert!(
                probes.get() <= bound,
                "{} probes for id {id} in {}",
                probes.get(),
                ids.len()
            );
        };
        for &id in ids {
            check(id);
            check(id.wrapping_sub(1));
            check(id.wrapping_add(1));
        }
        check(0);
        check(u64::MAX);
    }

    /// A sorted, deduplicated list of `n` ids from a xorshift generator,
    /// spread over `bits` bits.
    fn uniform(n: usize, bits: u32, mut state: u64) -> Vec<u64> {
        let mut ids: Vec<u64> = (0..n)
            .map(|_| xorshift(&mut state) >> (64 - bits))
            .collect();
        ids.sort_unstable();
        ids.dedup();
        ids
    }

    #[test]
    #[cfg_attr(miri, ignore = "safe code only: Miri adds nothing, and took minutes")]
    fn finds_every_id_however_they_are_spread() {
        // Every length around the interpolation's threshold of 16, ids
        // from the whole range (0 and `u64::MAX` included) and from a
        // narrow one.
        for n in 0..=40 {
            agrees(&uniform(n, 64, 0x9E37_79B9_7F4A_7C15 + n as u64));
            agrees(&uniform(n, 8, 0x2545_F491_4F6C_DD1D + n as u64));
            let mut ends = uniform(n, 64, 7 + n as u64);
            ends.extend([0, u64::MAX]);
            ends.sort_unstable();
            ends.dedup();
            agrees(&ends);
        }
        // Uniform, as hashed ids are: 50-bit ids.
        agrees(&uniform(5_000, 50, 0x9E37_79B9_7F4A_7C15));
        // Skewed: dense runs, one far outlier, exponential gaps (the
        // interpolation guesses badly; bisection still finishes).
        let mut skewed: Vec<u64> = (1..2_000).chain([1 << 49]).collect();
        skewed.extend((0..40).map(|shift| (1u64 << 50) + (1u64 << shift)));
        skewed.sort_unstable();
        skewed.dedup();
        agrees(&skewed);
    }

    /// Ids in any order, as a crafted file may hold them: every read in
    /// bounds (the slice would panic), and a position returned only if it
    /// holds the id.
    #[test]
    #[cfg_attr(miri, ignore = "safe code only: Miri adds nothing, and took minutes")]
    fn unsorted_ids_are_read_in_bounds_and_never_misreported() {
        let mut state = 0x0123_4567_89AB_CDEF_u64;
        let mut next = || xorshift(&mut state);
        let mut lists: Vec<Vec<u64>> =
            vec![(0..100).rev().collect(), (0..100).map(|i| i % 7).collect()];
        for n in 0..=40 {
            lists.push((0..n).map(|_| next() % 64).collect());
            lists.push((0..n).map(|_| next()).collect());
        }
        for ids in &lists {
            for id in ids.iter().copied().chain([0, 1, 63, 64, u64::MAX]) {
                let probes = Cell::new(0);
                if let Some(at) = search(ids, id, &probes) {
                    assert_eq!(ids[at], id);
                }
            }
        }
    }
}
