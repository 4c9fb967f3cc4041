//! The growth's unit tests: splits, compaction and the chains they leave.

use super::*;
use crate::raw::optimistic::log::Ref;

/// Keys enough for several rounds of splits and compactions (a table
/// starts with 64 buckets); fewer under Miri.
const KEYS: u32 = if cfg!(miri) { 3_000 } else { 40_000 };

/// A table of `count` keys of well-mixed hashes (refs `0..count`).
fn filled(count: u32) -> (Table, TableWriter, Vec<(u64, u32)>) {
    let (table, mut writer) = (Table::new(), TableWriter::default());
    let keys: Vec<(u64, u32)> = (0..count)
        .map(|at| (u64::from(at).wrapping_mul(0x9E37_79B9_7F4A_7C15), at))
        .collect();
    for &(hash, at) in &keys {
        table
            .insert(&mut writer, hash, Ref::from_bits(at), 0)
            .unwrap();
    }
    (table, writer, keys)
}

/// Every bucket's chain under the writer's current shape, as (buckets,
/// words) counts.
fn chains(table: &Table, writer: &TableWriter) -> Vec<(usize, usize)> {
    let shape = Shape::unpack(table.shape.load(Ordering::Relaxed));
    (0..shape.buckets())
        .map(|index| {
            let buckets: Vec<&Bucket> = chain(Table::bucket(writer.current_dir(), index)).collect();
            let words = buckets
                .iter()
                .flat_map(|bucket| &bucket.words)
                .filter(|slot| slot.load(Ordering::Relaxed) != 0)
                .count();
            (buckets.len(), words)
        })
        .collect()
}

#[test]
fn every_chain_has_as_few_buckets_as_its_words_need() {
    for count in [1, 500, KEYS / 8, KEYS] {
        let (table, writer, keys) = filled(count);
        for (index, (buckets, words)) in chains(&table, &writer).into_iter().enumerate() {
            assert_eq!(
                buckets,
                words.div_ceil(WORDS).max(1),
                "bucket {index} of {count}: {words} words"
            );
        }
        assert!(keys
            .iter()
            .all(|&(hash, at)| table.find(hash, |r| r.to_bits() == at).is_some()));
    }
}

#[test]
fn a_chain_longer_than_its_recorded_buckets_splits_whole() {
    // 300 keys in bucket 5 of the first 64 (43 buckets of chain, past
    // the `MASKED` whose movers a split records), their upper bits
    // mixed, and well-mixed keys enough to split it (the first step,
    // past the load of 71 buckets, splits buckets 0 to 7), as many
    // under Miri.
    let crowded = (0..300u32).map(|at| {
        let mixed = u64::from(at).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        (mixed & !0x3F | 5, at)
    });
    let spread = (300..700).map(|at| (u64::from(at).wrapping_mul(0x9E37_79B9_7F4A_7C15), at));
    let keys: Vec<(u64, u32)> = crowded.chain(spread).collect();
    let (table, mut writer) = (Table::new(), TableWriter::default());
    for &(hash, at) in &keys {
        table
            .insert(&mut writer, hash, Ref::from_bits(at), 0)
            .unwrap();
    }
    let shape = Shape::unpack(table.shape.load(Ordering::Relaxed));
    assert!(shape.buckets() > 64 + 5, "bucket 5 split");
    for (index, (buckets, words)) in chains(&table, &writer).into_iter().enumerate() {
        assert_eq!(buckets, words.div_ceil(WORDS).max(1), "bucket {index}");
    }
    assert_placed(&table, &writer, &keys);
}

/// Each key's word once in the table, in the bucket its hash names,
/// and no other word; each found.
fn assert_placed(table: &Table, writer: &TableWriter, keys: &[(u64, u32)]) {
    let shape = Shape::unpack(table.shape.load(Ordering::Relaxed));
    let mut found = 0;
    for index in 0..shape.buckets() {
        for bucket in chain(Table::bucket(writer.current_dir(), index)) {
            for slot in &bucket.words {
                let word = slot.load(Ordering::Relaxed);
                if word != 0 {
                    assert_eq!(shape.bucket_of(word), index);
                    found += 1;
                }
            }
        }
    }
    assert_eq!(found, keys.len());
    assert!(keys
        .iter()
        .all(|&(hash, at)| table.find(hash, |r| r.to_bits() == at).is_some()));
}

#[test]
fn every_overflow_bucket_is_linked_once_or_held_empty() {
    let (table, writer, _) = filled(KEYS);
    let linked: usize = chains(&table, &writer).iter().map(|c| c.0 - 1).sum();
    let handed_out = writer.pools.len() * SEGMENT_BUCKETS - writer.pool_left;
    let held = writer.spare.len() + writer.recycled.len();
    assert_eq!(linked + held, handed_out, "an overflow bucket was lost");
    assert!(!writer.recycled.is_empty() || linked < handed_out);
    for bucket in writer.spare.iter().chain(&writer.recycled) {
        // SAFETY: held by the writer, live in its pools.
        let bucket = unsafe { bucket.as_ref() };
        assert!(bucket.next.load(Ordering::Relaxed).is_null());
        assert!(bucket
            .words
            .iter()
            .all(|slot| slot.load(Ordering::Relaxed) == 0));
    }
}

#[test]
fn no_fresh_overflow_bucket_is_taken_while_emptied_ones_are_held() {
    let (table, mut writer) = (Table::new(), TableWriter::default());
    let handed_out = |w: &TableWriter| w.pools.len() * SEGMENT_BUCKETS - w.pool_left;
    let mut reused = 0;
    for at in 0..KEYS {
        let hash = u64::from(at).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        // An insert takes at most one spare, and the splits of a step,
        // on these keys, two more: with 3 held, none is fresh.
        let (held, before) = (
            writer.spare.len() + writer.recycled.len(),
            handed_out(&writer),
        );
        reused += usize::from(!writer.recycled.is_empty());
        table
            .insert(&mut writer, hash, Ref::from_bits(at), 0)
            .unwrap();
        if held >= 3 {
            assert_eq!(handed_out(&writer), before, "insert {at}");
        }
    }
    assert!(reused > 0, "no bucket was handed back");
}

/// The level of a table's first split: bucket 0 of the first 64 splits
/// into bucket 64 by this bit.
const FIRST_LEVEL: u32 = SEGMENT_BUCKETS.trailing_zeros();

/// A table of `keys` (all in bucket 0, whose chain they fill to
/// `buckets` buckets), bucket 0 split by hand at [`FIRST_LEVEL`] and the
/// shape published: what a step's clear finds.
fn split_bucket_zero(keys: &[(u64, u32)], buckets: usize) -> (Table, TableWriter, Sourced) {
    let (table, mut writer) = (Table::new(), TableWriter::default());
    table.reserve(&mut writer, 0).unwrap();
    for &(hash, at) in keys {
        table
            .insert(&mut writer, hash, Ref::from_bits(at), 0)
            .unwrap();
    }
    assert_eq!(chains(&table, &writer)[0], (buckets, keys.len()));
    table.ensure_segment(&mut writer, SEGMENT_BUCKETS).unwrap();
    let mut sourced = Sourced {
        source: 0,
        level: FIRST_LEVEL,
        ..Sourced::default()
    };
    table
        .split_one(&mut writer, SEGMENT_BUCKETS, &mut sourced)
        .unwrap();
    table
        .shape
        .store(Shape::new(FIRST_LEVEL, 1).pack(), Ordering::Release);
    (table, writer, sourced)
}

#[test]
fn a_split_that_keeps_its_overflow_buckets_clears_its_movers_alone() {
    // `WORDS + 3` keys (two buckets of chain), the first four of them
    // moving.
    let keys: Vec<(u64, u32)> = (0..WORDS as u32 + 3)
        .map(|at| {
            let k = u64::from(at);
            (
                u64::from(at < 4) << FIRST_LEVEL | k << (FIRST_LEVEL + 1),
                at,
            )
        })
        .collect();
    // Cleared keeping both its buckets: what a split does when it cannot
    // reserve room to hand back the emptied one.
    let (table, mut writer, sourced) = split_bucket_zero(&keys, 2);
    let first = Table::bucket(writer.current_dir(), 0);
    Table::clear_keeping(&mut writer, first, &sourced, sourced.buckets);
    let chains = chains(&table, &writer);
    assert_eq!(chains[0], (2, WORDS - 1), "the words that stay, in both");
    assert_eq!(chains[SEGMENT_BUCKETS], (1, 4), "the movers");
    assert!(writer.recycled.is_empty());
    assert_placed(&table, &writer, &keys);
}

#[test]
fn a_long_chains_few_movers_past_its_buffered_buckets_move() {
    // `MASKED * WORDS` keys that stay, then one that moves, in the
    // chain's bucket past the buffered ones. Found by review: the first
    // build copied such a mover only when more than `WORDS` moved, and
    // the clear dropped it.
    let stayers = u32::try_from(MASKED * WORDS).unwrap();
    let mut keys: Vec<(u64, u32)> = (0..stayers)
        .map(|at| (u64::from(at) << (FIRST_LEVEL + 1), at))
        .collect();
    keys.push((
        1 << FIRST_LEVEL | u64::from(stayers) << (FIRST_LEVEL + 1),
        stayers,
    ));
    let (table, mut writer, sourced) = split_bucket_zero(&keys, MASKED + 1);
    let first = Table::bucket(writer.current_dir(), 0);
    Table::clear_long_split(&mut writer, first, &sourced);
    assert_eq!(
        chains(&table, &writer)[SEGMENT_BUCKETS],
        (1, 1),
        "the mover"
    );
    assert_placed(&table, &writer, &keys);
}
