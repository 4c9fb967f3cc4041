//! Reading names fast: prefetch hints, and equality of short byte strings.

/// Hints the CPU to fetch the line at `addr` (a no-op where there is no such
/// hint). Never faults, whatever the address.
#[inline(always)]
pub(super) fn prefetch(addr: *const u8) {
    #[cfg(all(target_arch = "x86_64", not(miri)))]
    // SAFETY: `prefetcht0` only hints; it does not access memory
    // architecturally and never faults.
    unsafe {
        core::arch::x86_64::_mm_prefetch(addr.cast::<i8>(), core::arch::x86_64::_MM_HINT_T0);
    }
    #[cfg(not(all(target_arch = "x86_64", not(miri))))]
    let _ = addr;
}

/// Bytes in a cache line of the CPUs this is tuned for.
pub(super) const CACHE_LINE: usize = 64;

/// [`prefetch`]es the first and the last line of `bytes`.
#[inline(always)]
pub(super) fn prefetch_span(bytes: &[u8]) {
    prefetch(bytes.as_ptr());
    if bytes.len() > CACHE_LINE {
        prefetch(bytes.as_ptr().wrapping_add(bytes.len() - 1));
    }
}

/// Byte equality, inlined: names are short (20 to 100 bytes), where a call to
/// `memcmp` costs more than the compare. Compares 8-byte words, the last one
/// overlapping the one before, folding the differences so that the loop
/// branches once per word pair.
#[inline]
pub(crate) fn bytes_eq(a: &[u8], b: &[u8]) -> bool {
    let n = a.len();
    if n != b.len() {
        return false;
    }
    if n < 8 {
        if n >= 4 {
            // SAFETY: both are `n >= 4` bytes long.
            return unsafe {
                (read32(a, 0) ^ read32(b, 0)) | (read32(a, n - 4) ^ read32(b, n - 4)) == 0
            };
        }
        return a.iter().zip(b).all(|(x, y)| x == y);
    }
    let mut at = 0;
    while at + 16 < n {
        // SAFETY: both are `n > at + 16` bytes long.
        let differ = unsafe {
            (read64(a, at) ^ read64(b, at)) | (read64(a, at + 8) ^ read64(b, at + 8)) != 0
        };
        if differ {
            return false;
        }
        at += 16;
    }
    // At most 16 bytes left: the word at `at` (or the last one, if fewer
    // than 8 are left) and the last word, overlapping what was compared.
    let last = n - 8;
    let first = at.min(last);
    // SAFETY: `first <= last == n - 8`, both `n` bytes long.
    unsafe { (read64(a, first) ^ read64(b, first)) | (read64(a, last) ^ read64(b, last)) == 0 }
}

/// The little-endian `u64` at `s[at..at + 8]`, read without a bounds check
/// (the hash and the compare prove theirs; a checked read costs the hit
/// path two compares and branches a word).
///
/// # Safety
///
/// `at + 8 <= s.len()`.
#[inline(always)]
unsafe fn read64(s: &[u8], at: usize) -> u64 {
    debug_assert!(at + 8 <= s.len());
    // SAFETY: `s[at..at + 8]` is in bounds (the caller's contract);
    // unaligned reads of initialised bytes are allowed.
    u64::from_le(unsafe { s.as_ptr().add(at).cast::<u64>().read_unaligned() })
}

/// The little-endian `u32` at `s[at..at + 4]`, as [`read64`].
///
/// # Safety
///
/// `at + 4 <= s.len()`.
#[inline(always)]
unsafe fn read32(s: &[u8], at: usize) -> u32 {
    debug_assert!(at + 4 <= s.len());
    // SAFETY: as in `read64`.
    u32::from_le(unsafe { s.as_ptr().add(at).cast::<u32>().read_unaligned() })
}

/// The seed of a shard's [`hash_bytes`]: random per shard (placement need
/// not agree across processes; ids do), fixed in loom builds so that the
/// models can pick names by where they land.
#[derive(Clone, Copy, Debug)]
pub(crate) struct HashSeed([u64; 2]);

impl HashSeed {
    /// A fresh random seed (fixed in loom builds).
    pub(crate) fn new() -> HashSeed {
        #[cfg(not(interner_loom))]
        {
            use core::hash::BuildHasher;
            let state = foldhash::fast::RandomState::default();
            HashSeed([state.hash_one(0x5EED_u64), state.hash_one(0xF00D_u64)])
        }
        #[cfg(interner_loom)]
        {
            HashSeed::FIXED
        }
    }

    /// The seed of loom builds.
    #[cfg(interner_loom)]
    pub(crate) const FIXED: HashSeed = HashSeed([0x243F_6A88_85A3_08D3, 0x1319_8A2E_0370_7344]);
}

/// Multiplies as 128 bits and folds the halves together (foldhash's and
/// wyhash's mixing step).
#[inline(always)]
fn fold(a: u64, b: u64) -> u64 {
    let product = u128::from(a) * u128::from(b);
    (product as u64) ^ ((product >> 64) as u64)
}

/// Mixing constants (the fractional digits of pi, as in foldhash).
const K0: u64 = 0xA409_3822_299F_31D0;
const K1: u64 = 0x082E_FA98_EC4E_6C89;

/// A fast seeded hash of `bytes` for the by-bytes index (not SipHash: the
/// hit path computes no id). Folded multiplies over 16-byte pairs taken
/// from both ends, as foldhash's, inlined and without the length prefix a
/// `Hash` impl adds. Its low 32 bits place and filter entries.
#[inline]
pub(crate) fn hash_bytes(bytes: &[u8], seed: HashSeed) -> u64 {
    let n = bytes.len();
    let [mut s0, mut s1] = seed.0;
    s0 ^= n as u64;
    let (a, b) = if n <= 16 {
        let (a, b) = if n >= 8 {
            // SAFETY: `n >= 8`.
            unsafe { (read64(bytes, 0), read64(bytes, n - 8)) }
        } else if n >= 4 {
            // SAFETY: `n >= 4`.
            unsafe { (u64::from(read32(bytes, 0)), u64::from(read32(bytes, n - 4))) }
        } else if n > 0 {
            let lo = u64::from(bytes[0]) | u64::from(bytes[n / 2]) << 8;
            (lo, u64::from(bytes[n - 1]))
        } else {
            (0, 0)
        };
        (a ^ s0, b ^ s1)
    } else {
        // `front == 16k` and `back == n - 16k` after `k` rounds, each begun
        // with `back - front > 32`: so `n > 32k`, and `n > 16` before any.
        let (mut front, mut back) = (0, n);
        while back - front > 32 {
            // SAFETY: `front + 32 < back <= n`: all four words lie in
            // `bytes[front..back]`.
            unsafe {
                s0 = fold(read64(bytes, front) ^ s0, read64(bytes, back - 16) ^ K0);
                s1 = fold(read64(bytes, front + 8) ^ s1, read64(bytes, back - 8) ^ K1);
            }
            front += 16;
            back -= 16;
        }
        // At most 32 bytes left: the 16 after `front` and the 16 before
        // `back`, which may overlap each other and what the loop read.
        // SAFETY: `front + 16 <= n` and `back >= 16` (`16k + 16 <= n`: for
        // `k == 0` as `n > 16`, else as `n >= 32k + 1`), and `back <= n`.
        unsafe {
            s0 = fold(read64(bytes, front) ^ s0, read64(bytes, back - 16) ^ K0);
            s1 = fold(read64(bytes, front + 8) ^ s1, read64(bytes, back - 8) ^ K1);
        }
        (s0, s1)
    };
    fold(a ^ K1, b ^ K0)
}

/// The by-id map's placement: `id` mixed with the shard's seed, so that
/// caller-chosen ids cannot be crafted to share a probe sequence.
#[inline]
pub(crate) fn hash_id(id: u64, seed: HashSeed) -> u64 {
    fold(id ^ seed.0[0], seed.0[1] ^ K0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hash_bytes_spreads_every_length() {
        let seed = HashSeed([1, 2]);
        let mut seen = std::collections::HashSet::new();
        // Small under Miri, which is slow.
        let longest = if cfg!(miri) { 40 } else { 200 };
        let base: Vec<u8> = (0..longest).collect();
        for len in 0..=base.len() {
            assert!(seen.insert(hash_bytes(&base[..len], seed)), "prefix {len}");
            for flip in 0..len {
                let mut b = base[..len].to_vec();
                b[flip] ^= 1;
                assert!(seen.insert(hash_bytes(&b, seed)), "len {len}, byte {flip}");
            }
        }
        // The low 32 bits, which place entries, differ too.
        let low: std::collections::HashSet<u32> = seen.iter().map(|&h| h as u32).collect();
        assert!(low.len() + 4 >= seen.len());
        assert_ne!(
            hash_bytes(b"abc", seed),
            hash_bytes(b"abc", HashSeed([1, 3]))
        );
    }

    #[test]
    fn bytes_eq_agrees_with_slice_eq() {
        let base: Vec<u8> = (0..80u8).collect();
        for len in 0..=base.len() {
            let a = &base[..len];
            assert!(bytes_eq(a, a));
            for flip in 0..len {
                let mut b = a.to_vec();
                b[flip] ^= 0x40;
                assert!(!bytes_eq(a, &b), "len {len}, byte {flip}");
            }
            if len > 0 {
                assert!(!bytes_eq(a, &base[..len - 1]));
            }
        }
    }
}
