//! The snapshot builder's unit tests.

use super::*;

#[test]
fn ids_of_every_width_come_out_sorted() {
    // Under Miri, fewer per case: there are three times the cases of the
    // builder before, for the same time in CI.
    let n: u64 = if cfg!(miri) { 100 } else { 20_000 };
    // Hashed ids, full-width caller ids and narrowed test ids (repeated
    // with other bytes, to be contested), pushed into builders of one partition and of the most, with no room (all
    // spilled), room for about half and for all; finished on one thread
    // and on several.
    type NewBuilder = fn(u64) -> Builder;
    let builders: [(NewBuilder, usize); 6] = [
        (|_| Builder::default(), 1),
        (|_| Builder::with_parts(MAX_PART_BITS, 0, 0), 2),
        (
            |n| Builder::with_parts(MAX_PART_BITS, n as usize, 4 * n as usize),
            2,
        ),
        (
            |n| Builder::with_capacity(2 * n as usize, 18 * n as usize),
            1,
        ),
        (
            |n| Builder::with_capacity(2 * n as usize, 18 * n as usize),
            2,
        ),
        (
            |n| Builder::with_parts(3, 2 * n as usize, 18 * n as usize),
            5,
        ),
    ];
    for (spread, (new, threads)) in [ID_MASK, u64::MAX, 0xFF]
        .into_iter()
        .flat_map(|spread| builders.map(|b| (spread, b)))
    {
        let mut builder = new(n);
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        let mut expected = std::collections::BTreeMap::new();
        for i in 0..n {
            let id = crate::snapshot::xorshift(&mut state) & spread;
            let bytes = i.to_le_bytes();
            builder.push(id, &bytes);
            expected.entry(id).or_insert(bytes);
        }
        let snapshot = builder.finish_on(threads);
        let got: Vec<(u64, &[u8])> = snapshot.iter().collect();
        let want: Vec<(u64, &[u8])> = expected.iter().map(|(&id, b)| (id, &b[..])).collect();
        assert_eq!(got, want, "spread {spread:#x}, {threads} threads");
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
