//! `get_id` against the reference's known values, an independent oracle
//! (std's zero-keyed SipHash-1-3 hashing a `&str`), and `get_id_const`.

use std::hash::{DefaultHasher, Hash, Hasher};

use interned_string_db::{get_id, get_id_const, ID_MASK, INVALID_ID};
use proptest::prelude::*;

/// `impl Hash for str` writes the bytes then `0xFF`; `DefaultHasher::new()`
/// is SipHash-1-3 with a zero key. Independent of `siphasher` and of our
/// `const fn`.
fn oracle(s: &str) -> u64 {
    let mut hasher = DefaultHasher::new();
    s.hash(&mut hasher);
    (hasher.finish() & ID_MASK) + 1
}

#[test]
fn known_values_from_the_reference() {
    let known: &[(&str, u64)] = &[
        ("", 121655548788208),
        ("a", 933183196555764),
        ("model", 402710577667408),
        ("tensor_0", 635820126496557),
        ("Invalid interned string", 162418631006079),
        ("héllo", 588180410841216),
    ];
    for &(s, id) in known {
        assert_eq!(get_id(s.as_bytes()), id, "{s:?}");
        assert_eq!(get_id_const(s.as_bytes()), id, "{s:?}");
        assert_eq!(oracle(s), id, "{s:?}");
    }
    assert_ne!(get_id(b""), INVALID_ID);
}

/// Every length 0..=200, several contents each, plus every single byte value:
/// 100% agreement is required.
#[test]
fn every_length_agrees_with_the_oracle() {
    let mut checked = 0;
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    for len in 0..=200usize {
        for variant in 0..50 {
            let s: String = (0..len)
                .map(|i| {
                    state = state
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    match variant % 3 {
                        0 => (b'a' + (i % 26) as u8) as char,
                        1 => char::from(32 + ((state >> 33) % 95) as u8),
                        _ => {
                            char::from_u32(((state >> 40) % 0x2_0000) as u32).unwrap_or('\u{fffd}')
                        }
                    }
                })
                .collect();
            let id = get_id(s.as_bytes());
            assert_eq!(id, oracle(&s), "len {len} variant {variant}: {s:?}");
            assert_eq!(
                id,
                get_id_const(s.as_bytes()),
                "len {len} variant {variant}: {s:?}"
            );
            checked += 1;
        }
    }
    assert_eq!(checked, 201 * 50);
}

/// Bytes that are not UTF-8 have ids too: `get_id` and `get_id_const` agree.
#[test]
fn every_byte_value() {
    for b in 0..=255u8 {
        for len in [1usize, 7, 8, 9, 15, 16] {
            let bytes = vec![b; len];
            assert_eq!(get_id(&bytes), get_id_const(&bytes));
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4096))]

    #[test]
    fn random_utf8_agrees_with_the_oracle(s in "\\PC{0,300}") {
        prop_assert_eq!(get_id(s.as_bytes()), oracle(&s));
    }

    #[test]
    fn const_fn_equals_runtime(bytes in proptest::collection::vec(any::<u8>(), 0..600)) {
        let id = get_id(&bytes);
        prop_assert_eq!(get_id_const(&bytes), id);
        prop_assert!((1..=ID_MASK + 1).contains(&id));
    }
}
