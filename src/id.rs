//! The id function: a pure, bit-exact port of `neuron_rustime::string_db::get_id`.
//!
//! `get_id(bytes) = (SipHash-1-3(k0 = 0, k1 = 0, bytes ++ [0xFF]) & (2^50 - 1)) + 1`
//!
//! The 32 "key" bytes the reference reads from `.rodata` are SipHash's four
//! initialisation constants, which is what a zero key produces (see
//! `docs/design.md`). Hashing a `&str` into std's zero-keyed `DefaultHasher`
//! gives the same 64-bit value, which the tests use as an independent oracle.

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
    get_id_inlined(bytes)
}

/// [`get_id`], always inlined, one pass over `bytes` with no buffer: the
/// miss paths compute it in their own code, whatever the compiler decides
/// for `siphasher`'s streaming hasher (out of line, it took 166
/// instructions a call on 31-byte names, callgrind; inlined, about 60).
/// Equal to `siphasher`'s SipHash-1-3 for every input (unit test below).
#[inline(always)]
pub(crate) fn get_id_inlined(bytes: &[u8]) -> u64 {
    (sip13(bytes) & ID_MASK) + 1
}

/// SipHash-1-3 with a zero key over `bytes ++ [0xFF]`: [`sip13_str`] with
/// whole-word loads.
#[inline(always)]
fn sip13(bytes: &[u8]) -> u64 {
    let mut v = SIP_INIT;
    let mut words = bytes.chunks_exact(8);
    for word in &mut words {
        v = sip_compress(v, u64::from_le_bytes(word.try_into().expect("8 bytes")));
    }
    let rest = words.remainder();
    // The rest, the 0xFF terminator, and the length's low byte on top; a
    // rest of 7 bytes fills the word with the terminator, which then
    // takes one more word of its own.
    let mut tail = short_word(rest) | 0xFF << (8 * rest.len());
    if rest.len() == 7 {
        v = sip_compress(v, tail);
        tail = 0;
    }
    sip_finish(v, tail, bytes.len() + 1)
}

/// The little-endian word of `bytes` (at most 7), zero above them: two
/// overlapping loads from 4 bytes up, no call to `memcpy`.
#[inline(always)]
fn short_word(bytes: &[u8]) -> u64 {
    let n = bytes.len();
    debug_assert!(n < 8);
    if n >= 4 {
        let low = u64::from(u32::from_le_bytes(bytes[..4].try_into().expect("4 bytes")));
        let high = u64::from(u32::from_le_bytes(
            bytes[n - 4..].try_into().expect("4 bytes"),
        ));
        return low | high << (8 * (n - 4));
    }
    let mut word = 0;
    for (i, &byte) in bytes.iter().enumerate() {
        word |= u64::from(byte) << (8 * i);
    }
    word
}

/// SipHash's state for a zero key: "somepseudorandomlygeneratedbytes".
const SIP_INIT: [u64; 4] = [
    0x736f_6d65_7073_6575u64,
    0x646f_7261_6e64_6f6du64,
    0x6c79_6765_6e65_7261u64,
    0x7465_6462_7974_6573u64,
];

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
    // v0, v1, v2, v3 with k0 = k1 = 0.
    let mut v = SIP_INIT;
    let total = bytes.len() + 1; // the 0xFF terminator
    let full_blocks = total / 8;
    let mut block = 0;
    while block < full_blocks {
        v = sip_compress(v, message_word(bytes, block * 8));
        block += 1;
    }
    sip_finish(v, message_word(bytes, full_blocks * 8), total)
}

/// One message word into the state: SipHash-1-3's one compression round.
#[inline(always)]
const fn sip_compress(mut v: [u64; 4], m: u64) -> [u64; 4] {
    v[3] ^= m;
    v = sip_round(v);
    v[0] ^= m;
    v
}

/// The last word (`tail`, the message's last bytes, zero above them) with
/// the length `total`'s low byte on top, then the three finishing rounds.
#[inline(always)]
const fn sip_finish(mut v: [u64; 4], tail: u64, total: usize) -> u64 {
    v = sip_compress(v, tail | ((total as u64 & 0xff) << 56));
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

#[inline(always)]
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
    fn the_inlined_hash_is_siphasher_s_for_every_length() {
        use core::hash::Hasher;
        let bytes: Vec<u8> = (0..300u32)
            .map(|i| (i.wrapping_mul(151) ^ 0x5A) as u8)
            .collect();
        // Every length class of the tail and a few words; all 300 outside
        // Miri, which interprets each hash.
        let lengths = if cfg!(miri) { 40 } else { bytes.len() };
        for len in 0..lengths {
            for start in [0, 1, 3] {
                let Some(name) = bytes.get(start..start + len) else {
                    continue;
                };
                let mut hasher = siphasher::sip::SipHasher13::new_with_keys(0, 0);
                hasher.write(name);
                hasher.write_u8(0xFF);
                assert_eq!(sip13(name), hasher.finish(), "{len} bytes at {start}");
                assert_eq!(get_id_inlined(name), get_id_const(name));
            }
        }
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
