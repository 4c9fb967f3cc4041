//! The id function: a pure, bit-exact port of `neuron_rustime::string_db::get_id`.
//!
//! `get_id(bytes) = (SipHash-1-3(k0 = 0, k1 = 0, bytes ++ [0xFF]) & (2^50 - 1)) + 1`
//!
//! The 32 "key" bytes the reference reads from `.rodata` are SipHash's four
//! initialisation constants, which is what a zero key produces (see
//! `docs/design.md`). Hashing a `&str` into std's zero-keyed `DefaultHasher`
//! gives the same 64-bit value, which the tests use as an independent oracle.

use core::hash::Hasher;

/// The id that no string has: the reference's "Invalid interned string"
/// sentinel.
pub const INVALID_ID: u64 = 0;

/// The 50 low bits that an id keeps of the hash (the width of the trace
/// `tracking_id` field).
pub const ID_MASK: u64 = (1 << 50) - 1;

/// The largest id: ids are in `1..=MAX_ID`.
pub const MAX_ID: u64 = ID_MASK + 1;

/// The deterministic id of `bytes`, in `1..=2^50`.
///
/// Pure and lock-free: it reads no table, and the same bytes give the same id
/// in every process, on every run, on every NC.
///
/// ```
/// assert_eq!(interned_string_db::get_id(b"model"), 402710577667408);
/// ```
#[inline]
pub fn get_id(bytes: &[u8]) -> u64 {
    let mut hasher = siphasher::sip::SipHasher13::new_with_keys(0, 0);
    hasher.write(bytes);
    hasher.write_u8(0xFF);
    (hasher.finish() & ID_MASK) + 1
}

/// [`get_id`] as a `const fn`, so the id of a literal costs nothing at run
/// time. It equals [`get_id`] for every input.
///
/// ```
/// use interned_string_db::{get_id, get_id_const};
/// const MODEL: u64 = get_id_const(b"model");
/// assert_eq!(MODEL, get_id(b"model"));
/// ```
pub const fn get_id_const(bytes: &[u8]) -> u64 {
    (sip13_str(bytes) & ID_MASK) + 1
}

/// SipHash-1-3 with a zero key over `bytes ++ [0xFF]`.
const fn sip13_str(bytes: &[u8]) -> u64 {
    // "somepseudorandomlygeneratedbytes": v0, v1, v2, v3 with k0 = k1 = 0.
    let mut v = [
        0x736f_6d65_7073_6575u64,
        0x646f_7261_6e64_6f6du64,
        0x6c79_6765_6e65_7261u64,
        0x7465_6462_7974_6573u64,
    ];
    let total = bytes.len() + 1; // the 0xFF terminator
    let full_blocks = total / 8;
    let mut block = 0;
    while block < full_blocks {
        let m = message_word(bytes, block * 8);
        v[3] ^= m;
        v = sip_round(v);
        v[0] ^= m;
        block += 1;
    }
    // The last word: the tail bytes, then the length's low byte on top.
    let tail = message_word(bytes, full_blocks * 8) | ((total as u64 & 0xff) << 56);
    v[3] ^= tail;
    v = sip_round(v);
    v[0] ^= tail;
    v[2] ^= 0xff;
    v = sip_round(v);
    v = sip_round(v);
    v = sip_round(v);
    v[0] ^ v[1] ^ v[2] ^ v[3]
}

/// The little-endian word at `start` of the message `bytes ++ [0xFF]`,
/// zero-padded past its end.
const fn message_word(bytes: &[u8], start: usize) -> u64 {
    let mut word = 0u64;
    let mut i = 0;
    while i < 8 {
        let pos = start + i;
        let byte = if pos < bytes.len() {
            bytes[pos]
        } else if pos == bytes.len() {
            0xFF
        } else {
            break;
        };
        word |= (byte as u64) << (8 * i);
        i += 1;
    }
    word
}

const fn sip_round(mut v: [u64; 4]) -> [u64; 4] {
    v[0] = v[0].wrapping_add(v[1]);
    v[1] = v[1].rotate_left(13);
    v[1] ^= v[0];
    v[0] = v[0].rotate_left(32);
    v[2] = v[2].wrapping_add(v[3]);
    v[3] = v[3].rotate_left(16);
    v[3] ^= v[2];
    v[0] = v[0].wrapping_add(v[3]);
    v[3] = v[3].rotate_left(21);
    v[3] ^= v[0];
    v[2] = v[2].wrapping_add(v[1]);
    v[1] = v[1].rotate_left(17);
    v[1] ^= v[2];
    v[2] = v[2].rotate_left(32);
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_value() {
        // The full table of the reference's known values is in tests/it/get_id.rs.
        assert_eq!(get_id(b"model"), 402710577667408);
        assert_eq!(get_id_const(b"model"), 402710577667408);
    }

    #[test]
    fn const_evaluation() {
        const ID: u64 = get_id_const(b"tensor_0");
        assert_eq!(ID, 635820126496557);
    }

    #[test]
    fn range() {
        for s in ["", "x", "a much longer string than one block"] {
            let id = get_id(s.as_bytes());
            assert!((1..=MAX_ID).contains(&id));
        }
    }
}
