//! Reading names fast: the seeded hashes that place entries in the
//! optimistic shard ([`hash_bytes`] for the by-bytes index, [`hash_id`] for
//! the by-id map; not SipHash, which a hit never computes), the equality of
//! short byte strings, the names of 17 to 64 bytes whose hash and compare
//! share one length branch ([`mid_name`]), those of 65 to 128 bytes
//! whose hash and compare read two 64-byte windows of the same chunks (in
//! [`hash_bytes`] and [`bytes_eq`]), and prefetch hints.

use crate::raw::sizes::FIXED_SEED;

#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
use self::sse2::{chunk_diff, is_same, or, Diff};
#[cfg(not(all(target_arch = "x86_64", target_feature = "sse2")))]
use self::words::{chunk_diff, is_same, or, Diff};

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
/// `memcmp` costs more than the compare. Up to 16 bytes compares 8-byte
/// words (or 4-byte ones); past them folds the differences of 16-byte
/// chunks (in SSE2 registers on x86-64, [`sse2`]; 8-byte words elsewhere)
/// so that names of 17 to 64 bytes take one branch after the length's:
/// their compare reads four 16-byte chunks that cover them, overlapping
/// (the same chunks as [`hash_bytes`]), whatever their length, so that a
/// vocabulary of mixed lengths does not mispredict a loop's exit; names
/// of 65 to 128 bytes (most paths) the same of two overlapping windows,
/// `[0, 64)` and `[n - 64, n)`, their differences joined before the one
/// test; longer names two chunks a round, then a window.
/// Always inlined: left to the compiler, batch lookups called it, a cost
/// of its own on every name (`docs/history.md`).
#[inline(always)]
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
    if n <= 16 {
        // SAFETY: both are `n >= 8` bytes long.
        return unsafe {
            (read64(a, 0) ^ read64(b, 0)) | (read64(a, n - 8) ^ read64(b, n - 8)) == 0
        };
    }
    if let Some([head, tail]) = two_windows(n) {
        // SAFETY: both are `n` bytes long, and every chunk of the two
        // windows lies in `[0, n)` (`two_windows`' contract).
        let diff = unsafe { or(diff_chunks(a, b, head), diff_chunks(a, b, tail)) };
        return is_same(diff);
    }
    let mut at = 0;
    while at + 64 < n {
        // SAFETY: both are `n > at + 64` bytes long.
        if !is_same(unsafe { or(chunk_diff(a, b, at), chunk_diff(a, b, at + 16)) }) {
            return false;
        }
        at += 32;
    }
    // 16 < n - at <= 64 bytes left.
    // SAFETY: both are `n` bytes long, and every chunk lies in `[at, n)`
    // (`chunks`' contract).
    unsafe { eq_chunks(a, b, chunks(at, n)) }
}

/// A name of 17 to 64 bytes (the names of most vocabularies) with the four
/// chunks that [`hash_bytes`] and [`bytes_eq`] read of it, if `bytes` is
/// one: a hit that computes them once and passes them to [`hash_mid`] and
/// [`eq_mid`] takes the length's branches once and the chunks' offsets
/// once, where the hash and the compare would each take their own.
#[inline(always)]
pub(crate) fn mid_name(bytes: &[u8]) -> Option<MidName<'_>> {
    let n = bytes.len();
    (n > 16 && n <= 64).then(|| MidName {
        bytes,
        chunks: chunks(0, n),
    })
}

/// A name of 17 to 64 bytes and its chunks ([`mid_name`]), which lie in it.
#[derive(Clone, Copy)]
pub(crate) struct MidName<'a> {
    bytes: &'a [u8],
    chunks: [usize; 4],
}

/// [`hash_bytes`] of `name`.
#[inline(always)]
pub(crate) fn hash_mid(name: MidName<'_>, seed: HashSeed) -> u64 {
    let [s0, s1] = seed.0;
    let s0 = s0 ^ name.bytes.len() as u64;
    // SAFETY: `mid_name` made the chunks for these bytes: each lies in them.
    let (s0, s1) = unsafe { fold_chunks(name.bytes, s0, s1, seed, name.chunks) };
    finish(s0, s1)
}

/// [`bytes_eq`] of `a` and `name`.
#[inline(always)]
pub(crate) fn eq_mid(a: &[u8], name: MidName<'_>) -> bool {
    // SAFETY: `mid_name` made the chunks for `name`'s bytes, and `a` is as
    // long.
    a.len() == name.bytes.len() && unsafe { eq_chunks(a, name.bytes, name.chunks) }
}

/// Whether `a` and `b` agree on the four 16-byte chunks at `chunks`.
///
/// # Safety
///
/// Every chunk lies in both `a` and `b`.
#[inline(always)]
unsafe fn eq_chunks(a: &[u8], b: &[u8], chunks: [usize; 4]) -> bool {
    // SAFETY: the caller's contract.
    is_same(unsafe { diff_chunks(a, b, chunks) })
}

/// The bits that differ between `a` and `b` in the four 16-byte chunks at
/// `chunks`, folded together.
///
/// # Safety
///
/// Every chunk lies in both `a` and `b`.
#[inline(always)]
unsafe fn diff_chunks(a: &[u8], b: &[u8], [c0, c1, c2, c3]: [usize; 4]) -> Diff {
    // SAFETY: the caller's contract.
    unsafe {
        or(
            or(chunk_diff(a, b, c0), chunk_diff(a, b, c1)),
            or(chunk_diff(a, b, c2), chunk_diff(a, b, c3)),
        )
    }
}

/// The starts of four 16-byte chunks that together cover `[from, to)`, for
/// `16 < to - from <= 64`: at `from`, `from + s`, `to - 16 - s` and
/// `to - 16`, where `s = clamp(len - 32, 0, 16)`, computed without a branch.
/// Each lies within `[from, to)`: `s <= len - 16` (`s` is 0 up to 32
/// bytes, and at most `len - 32` past them).
#[inline(always)]
fn chunks(from: usize, to: usize) -> [usize; 4] {
    let len = to - from;
    debug_assert!(len > 16 && len <= 64);
    let s = len.saturating_sub(32).min(16);
    [from, from + s, to - 16 - s, to - 16]
}

/// The chunks of the two overlapping 64-byte windows, `[0, 64)` and
/// `[n - 64, n)`, that [`hash_bytes`] and [`bytes_eq`] read of a name of
/// `n` bytes, if `n` is 65 to 128 (most paths): every chunk lies within
/// its window (`chunks`' contract) and each window within `[0, n)` (`64 <
/// n`), and together they cover `[0, n)` (`n <= 128`), with no loop whose
/// exit depends on the length.
#[inline(always)]
fn two_windows(n: usize) -> Option<[[usize; 4]; 2]> {
    (n > 64 && n <= 128).then(|| [chunks(0, 64), chunks(n - 64, n)])
}

/// A compare's differences in SSE2 registers (x86-64's baseline): a
/// 16-byte chunk in two loads and an `xor`, the chunks a test covers (a
/// window's four, two windows' eight, a long name's round's two) folded
/// together and tested with one compare and one mask, where the words
/// take four loads and three operations a chunk (`docs/history.md`, "The
/// hit path", "Byte compares in SSE2").
#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
mod sse2 {
    use core::arch::x86_64::{
        __m128i, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_movemask_epi8, _mm_or_si128,
        _mm_setzero_si128, _mm_xor_si128,
    };

    /// The bits that differ between two compared spans.
    pub(super) type Diff = __m128i;

    /// The bits that differ between `a[at..at + 16]` and `b[at..at + 16]`.
    ///
    /// # Safety
    ///
    /// `at + 16 <= a.len()` and `at + 16 <= b.len()`.
    #[inline(always)]
    pub(super) unsafe fn chunk_diff(a: &[u8], b: &[u8], at: usize) -> Diff {
        debug_assert!(at + 16 <= a.len() && at + 16 <= b.len());
        // SAFETY: the build enables SSE2 (the module's `cfg`), so the CPU
        // has these instructions; both 16-byte loads lie in their slices
        // (the caller's contract), read initialised bytes and need no
        // alignment.
        unsafe {
            _mm_xor_si128(
                _mm_loadu_si128(a.as_ptr().add(at).cast()),
                _mm_loadu_si128(b.as_ptr().add(at).cast()),
            )
        }
    }

    /// The differences of both.
    #[inline(always)]
    pub(super) fn or(x: Diff, y: Diff) -> Diff {
        // SAFETY: the build enables SSE2 (the module's `cfg`): the CPU has
        // the instruction, which touches only registers.
        unsafe { _mm_or_si128(x, y) }
    }

    /// Whether nothing differs.
    #[inline(always)]
    pub(super) fn is_same(diff: Diff) -> bool {
        // SAFETY: as in `or`.
        unsafe { _mm_movemask_epi8(_mm_cmpeq_epi8(diff, _mm_setzero_si128())) == 0xFFFF }
    }
}

/// A compare's differences in 8-byte words: the portable form of the
/// `sse2` module's, compiled (and tested against it) on x86-64 too.
#[cfg_attr(all(target_arch = "x86_64", target_feature = "sse2"), allow(dead_code))]
mod words {
    use super::read64;

    /// The bits that differ between two compared spans, folded into one
    /// word.
    pub(super) type Diff = u64;

    /// The bits that differ between `a[at..at + 16]` and `b[at..at + 16]`.
    ///
    /// # Safety
    ///
    /// `at + 16 <= a.len()` and `at + 16 <= b.len()`.
    #[inline(always)]
    pub(super) unsafe fn chunk_diff(a: &[u8], b: &[u8], at: usize) -> Diff {
        // SAFETY: the caller's contract.
        unsafe { (read64(a, at) ^ read64(b, at)) | (read64(a, at + 8) ^ read64(b, at + 8)) }
    }

    /// The differences of both.
    #[inline(always)]
    pub(super) fn or(x: Diff, y: Diff) -> Diff {
        x | y
    }

    /// Whether nothing differs.
    #[inline(always)]
    pub(super) fn is_same(diff: Diff) -> bool {
        diff == 0
    }
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
    /// A fresh random seed ([`FIXED`](Self::FIXED) in loom builds:
    /// [`FIXED_SEED`]).
    pub(crate) fn new() -> HashSeed {
        if FIXED_SEED {
            return HashSeed::FIXED;
        }
        use core::hash::BuildHasher;
        let state = foldhash::fast::RandomState::default();
        HashSeed([state.hash_one(0x5EED_u64), state.hash_one(0xF00D_u64)])
    }

    /// The second operands' keys of [`hash_bytes`]' multiplies: seeded too.
    #[inline(always)]
    fn keys(self) -> (u64, u64) {
        (K0 ^ self.0[1], K1 ^ self.0[0])
    }

    /// The seed of loom builds.
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
/// hit path computes no id). Folded multiplies over 16-byte chunks, as
/// foldhash's, inlined and without the length prefix a `Hash` impl adds.
/// Names of 17 to 64 bytes read the four chunks of [`chunks`] whatever
/// their length, with no branch past the length's; names of 65 to 128
/// bytes the same of their first 64 and then of their last 64 (two
/// overlapping windows, no loop: a loop's exit, which depends on the
/// length, mispredicts on a vocabulary of mixed lengths); longer ones fold
/// 32 bytes a round, then their last 33 to 64 as a window. Both operands
/// of every multiply are seeded (a constant one would let names whose
/// bytes cancel it, `fold(x, 0) == 0`, hash alike whatever the seed). Its
/// low 32 bits place and filter entries. The shard's own, never stored or
/// sent: its definition may change between builds. Always inlined: out of
/// line, a hit on a name of up to 16 or past 64 bytes paid the call, its
/// arguments and its result on its chain of dependent steps
/// (`docs/history.md`, "The hit path").
#[inline(always)]
pub(crate) fn hash_bytes(bytes: &[u8], seed: HashSeed) -> u64 {
    let n = bytes.len();
    let [mut s0, mut s1] = seed.0;
    let (k0, k1) = seed.keys();
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
    } else if let Some([head, tail]) = two_windows(n) {
        // SAFETY: `bytes` is `n` long, and every chunk of the two windows
        // lies in `[0, n)` (`two_windows`' contract).
        unsafe {
            let (s0, s1) = fold_chunks(bytes, s0, s1, seed, head);
            fold_chunks(bytes, s0, s1, seed, tail)
        }
    } else {
        let mut at = 0;
        while at + 64 < n {
            // SAFETY: `at + 64 < n`: both chunks lie in `bytes`.
            unsafe {
                s0 = fold(read64(bytes, at) ^ s0, read64(bytes, at + 16) ^ k0);
                s1 = fold(read64(bytes, at + 8) ^ s1, read64(bytes, at + 24) ^ k1);
            }
            at += 32;
        }
        // 16 < n - at <= 64 bytes left.
        // SAFETY: every chunk lies in `[at, n)` (`chunks`' contract).
        unsafe { fold_chunks(bytes, s0, s1, seed, chunks(at, n)) }
    };
    finish(a, b)
}

/// The last step of [`hash_bytes`]. The constants, not the seeded keys: for
/// short names `a` and `b` hold the seed already, which those would cancel.
#[inline(always)]
fn finish(a: u64, b: u64) -> u64 {
    fold(a ^ K1, b ^ K0)
}

/// Folds the four 16-byte chunks at `chunks` of `bytes` into the state
/// `(s0, s1)` of [`hash_bytes`].
///
/// # Safety
///
/// Every chunk lies in `bytes`.
#[inline(always)]
unsafe fn fold_chunks(
    bytes: &[u8],
    mut s0: u64,
    mut s1: u64,
    seed: HashSeed,
    [c0, c1, c2, c3]: [usize; 4],
) -> (u64, u64) {
    let (k0, k1) = seed.keys();
    // SAFETY: the caller's contract.
    unsafe {
        s0 = fold(read64(bytes, c0) ^ s0, read64(bytes, c3) ^ k0);
        s1 = fold(read64(bytes, c0 + 8) ^ s1, read64(bytes, c3 + 8) ^ k1);
        s0 = fold(read64(bytes, c1) ^ s0, read64(bytes, c2) ^ k1);
        s1 = fold(read64(bytes, c1 + 8) ^ s1, read64(bytes, c2 + 8) ^ k0);
    }
    (s0, s1)
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
    fn mid_names_hash_and_compare_as_the_general_path() {
        let seed = HashSeed([3, 4]);
        let name: Vec<u8> = (0..80u8).map(|i| i.wrapping_mul(37)).collect();
        for n in 0..=80 {
            let bytes = &name[..n];
            let Some(mid) = mid_name(bytes) else {
                assert!(n <= 16 || n > 64, "{n} bytes");
                continue;
            };
            assert!(n > 16 && n <= 64, "{n} bytes");
            assert_eq!(hash_mid(mid, seed), hash_bytes(bytes, seed));
            assert!(eq_mid(bytes, mid));
            let mut other = bytes.to_vec();
            for at in 0..n {
                other[at] ^= 1;
                assert!(!eq_mid(&other, mid), "{n} bytes, {at}");
                other[at] ^= 1;
            }
            assert!(!eq_mid(&name[..n - 1], mid));
            assert!(!eq_mid(&name[..n + 1], mid));
        }
    }

    /// A name of 300 bytes, whose prefixes take every path of the hash and
    /// the compare, and the step between the bytes a test flips (each).
    /// Under Miri, which is slow, 140 bytes (still past 128) and every
    /// 13th byte.
    fn name_and_flip_step() -> (Vec<u8>, usize) {
        let (longest, step) = if cfg!(miri) { (140, 13) } else { (300, 1) };
        let name = (0..longest)
            .map(|i: u16| i as u8 ^ (i >> 8) as u8)
            .collect();
        (name, step)
    }

    #[test]
    fn hash_bytes_spreads_every_length() {
        let seed = HashSeed([1, 2]);
        let mut seen = std::collections::HashSet::new();
        // 17 to 64 bytes, one window of chunks; 65 to 128, two; past 128,
        // the rounds of 32 before the last 33 to 64.
        let (base, step) = name_and_flip_step();
        for len in 0..=base.len() {
            assert!(seen.insert(hash_bytes(&base[..len], seed)), "prefix {len}");
            let mut b = base[..len].to_vec();
            for flip in (0..len).step_by(step) {
                b[flip] ^= 1;
                assert!(seen.insert(hash_bytes(&b, seed)), "len {len}, byte {flip}");
                b[flip] ^= 1;
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
    fn bytes_that_cancel_the_constants_still_spread() {
        // Were the keys unseeded (`K0`, `K1`), a second operand `data ^ key`
        // would be 0 for this data, and the fold 0 whatever the seed: every
        // such name would share a bucket (each length below fails so). The
        // second operands are the last window's chunks c3, its last 16
        // bytes (keys `k0` then `k1`), and c2 (`k1` then `k0`): the 16
        // before them in a window of 48 bytes or more, c3 again up to 32.
        let k = |keys: &[u64]| -> Vec<u8> { keys.iter().flat_map(|k| k.to_le_bytes()).collect() };
        let seed = HashSeed([1, 2]);
        let mut seen = std::collections::HashSet::new();
        // One window, two (65 to 128), and rounds before a window of 48.
        for len in [17usize, 24, 32, 48, 64, 65, 80, 100, 128, 176, 208] {
            let tail = if len <= 32 {
                k(&[K1, K0])
            } else {
                k(&[K1, K0, K0, K1])
            };
            for first in 0..50u8 {
                let mut name = vec![first; len - tail.len()];
                name.extend_from_slice(&tail);
                assert!(seen.insert(hash_bytes(&name, seed)), "len {len}, {first}");
            }
        }
    }

    #[test]
    #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
    fn sse2_and_words_agree_on_every_bit() {
        let a: Vec<u8> = (0..48u8).collect();
        let mut b = a.clone();
        // Chunks at aligned and unaligned offsets, alone and joined by `or`
        // with the last one, `[32, 48)`.
        for at in [0usize, 5, 16, 27, 32] {
            // SAFETY: `at + 16 <= 48` and `32 + 16 <= 48`, both slices'
            // length.
            let same = |a: &[u8], b: &[u8]| unsafe {
                let joined = (
                    sse2::or(sse2::chunk_diff(a, b, at), sse2::chunk_diff(a, b, 32)),
                    words::or(words::chunk_diff(a, b, at), words::chunk_diff(a, b, 32)),
                );
                [
                    sse2::is_same(sse2::chunk_diff(a, b, at)),
                    words::is_same(words::chunk_diff(a, b, at)),
                    sse2::is_same(joined.0),
                    words::is_same(joined.1),
                ]
            };
            assert_eq!(same(&a, &b), [true; 4]);
            for byte in 0..48 {
                for bit in 0..8 {
                    b[byte] ^= 1 << bit;
                    let alone = !(at..at + 16).contains(&byte);
                    let joined = alone && byte < 32;
                    assert_eq!(
                        same(&a, &b),
                        [alone, alone, joined, joined],
                        "{at} {byte} {bit}"
                    );
                    b[byte] ^= 1 << bit;
                }
            }
        }
    }

    #[test]
    fn bytes_eq_agrees_with_slice_eq() {
        // 65 to 128 bytes, two windows; past 128, the rounds of 32 before
        // the last 33 to 64.
        let (base, step) = name_and_flip_step();
        for len in 0..=base.len() {
            let a = &base[..len];
            let mut b = a.to_vec();
            assert!(bytes_eq(a, &b));
            for flip in (0..len).step_by(step) {
                b[flip] ^= 0x40;
                assert!(!bytes_eq(a, &b), "len {len}, byte {flip}");
                b[flip] ^= 0x40;
            }
            if len > 0 {
                assert!(!bytes_eq(a, &base[..len - 1]));
            }
        }
    }
}
