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
/// overlapping the one before.
#[inline]
pub(crate) fn bytes_eq(a: &[u8], b: &[u8]) -> bool {
    let n = a.len();
    if n != b.len() {
        return false;
    }
    if n < 8 {
        return a.iter().zip(b).all(|(x, y)| x == y);
    }
    let word = |s: &[u8], at: usize| u64::from_ne_bytes(s[at..at + 8].try_into().unwrap());
    let mut at = 0;
    while at + 8 < n {
        if word(a, at) != word(b, at) {
            return false;
        }
        at += 8;
    }
    word(a, n - 8) == word(b, n - 8)
}

#[cfg(test)]
mod tests {
    use super::*;

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
