//! The by-bytes table's unit tests: probes, growth, compaction and
//! refusals.

use super::*;
use crate::raw::alloc::refusals;
use crate::raw::sizes::WORDS;

/// Whether the table finds every ref of `keys` (hash, ref bits).
fn finds_all(table: &Table, keys: &[(u64, u32)]) -> bool {
    keys.iter()
        .all(|&(hash, at)| table.find(hash, |r| r.to_bits() == at).is_some())
}

/// Every slot word of every chain, in order.
fn layout(table: &Table, writer: &TableWriter) -> Vec<Vec<u64>> {
    let shape = Shape::unpack(table.shape.load(Ordering::Relaxed));
    (0..shape.buckets())
        .map(|index| {
            chain(Table::bucket(writer.current_dir(), index))
                .flat_map(|bucket| &bucket.words)
                .map(|slot| slot.load(Ordering::Relaxed))
                .collect()
        })
        .collect()
}

#[test]
fn the_probes_vacancy_is_where_a_walk_of_its_own_would_place() {
    // Hashes that crowd a few buckets, so that chains overflow and
    // vacancies fall after full chains as well as in holes.
    // Fewer under Miri (each walks a chain some 30 buckets long), still
    // past the first growth step.
    let count = if cfg!(miri) { 1_000 } else { 3_000u32 };
    let keys: Vec<(u64, u32)> = (0..count)
        .map(|at| {
            (
                u64::from(at % 97).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ u64::from(at) << 40,
                at,
            )
        })
        .collect();
    let (walked, mut walker) = (Table::new(), TableWriter::default());
    let (probed, mut prober) = (Table::new(), TableWriter::default());
    for &(hash, at) in &keys {
        walked
            .insert(&mut walker, hash, Ref::from_bits(at), 0)
            .unwrap();
        let vacancy = probed
            .find_map_or_vacancy(hash, |_| None::<()>)
            .expect_err("no key is accepted");
        assert_eq!(
            vacancy.is_none(),
            at == 0,
            "a vacancy once the table has buckets"
        );
        probed.reserve(&mut prober, 0).unwrap();
        probed.insert_reserved(&mut prober, hash, Ref::from_bits(at), vacancy);
    }
    assert_eq!(layout(&walked, &walker), layout(&probed, &prober));
    assert!(finds_all(&probed, &keys));
    // A key the probe accepts is found, not placed: in a chain's first
    // bucket, its second, or past them (outside Miri, whose fewer keys
    // leave chains of two).
    for &(hash, at) in &keys {
        assert_eq!(
            probed
                .find_map_or_vacancy(hash, |r| (r.to_bits() == at).then_some(r.to_bits()))
                .ok(),
            Some(at)
        );
    }
}

#[test]
fn a_split_that_cannot_allocate_loses_no_word() {
    let (table, mut writer) = (Table::new(), TableWriter::default());
    table.reserve(&mut writer, 0).unwrap();
    let buckets = SEGMENT_BUCKETS as u64;
    let level = buckets.trailing_zeros();
    // Bucket 0 holds 3 × WORDS keys that its split moves (bit `level`
    // set): the new bucket needs two overflow buckets. The rest fill the
    // other buckets up to the load that starts a growth step.
    let movers = (0..3 * WORDS as u64).map(|k| (1 << level) | (k << (level + 1)));
    let others = (0..).map(|k| 1 + k % (buckets - 1) + (k << (level + 1)));
    let keys: Vec<(u64, u32)> = movers
        .chain(others)
        .take(LOAD * (SEGMENT_BUCKETS + SPLITS_PER_STEP - 1) + 1)
        .zip(0..)
        .collect();
    let (last, first) = keys.split_last().unwrap();
    for &(hash, at) in first {
        table
            .insert(&mut writer, hash, Ref::from_bits(at), 0)
            .unwrap();
    }
    assert!(finds_all(&table, first));
    // The insert that splits bucket 0, with no overflow bucket to be had
    // (the new bucket's segment allocated, the last pool used up).
    table.reserve(&mut writer, 0).unwrap();
    table.ensure_segment(&mut writer, SEGMENT_BUCKETS).unwrap();
    writer.pool_left = 0;
    refusals::arm();
    table.insert_reserved(&mut writer, last.0, Ref::from_bits(last.1), None);
    refusals::disarm();
    assert!(finds_all(&table, &keys), "a failed split lost words");
    assert_eq!(
        Shape::unpack(table.shape.load(Ordering::Relaxed)).split,
        0,
        "the split did not happen"
    );
    // The next insert splits.
    let next = (2, u32::try_from(keys.len()).unwrap());
    table
        .insert(&mut writer, next.0, Ref::from_bits(next.1), 0)
        .unwrap();
    assert!(Shape::unpack(table.shape.load(Ordering::Relaxed)).split > 0);
    assert!(finds_all(&table, &keys) && finds_all(&table, &[next]));
}

#[test]
fn a_large_table_splits_to_its_own_load() {
    // `LOAD` a bucket, then a ramp down to `LARGE_LOAD` over a level:
    // continuous, increasing, and `buckets_for` its inverse.
    use crate::raw::sizes::{LARGE_LOAD, LARGE_TABLE_BUCKETS as T};
    assert_eq!(capacity_of(T - 1), LOAD * (T - 1));
    assert_eq!(capacity_of(T), LOAD * T);
    assert_eq!(capacity_of(2 * T), LARGE_LOAD * 2 * T);
    assert_eq!(capacity_of(3 * T), LARGE_LOAD * 3 * T);
    for buckets in [1, T - 1, T, T + 1, T + T / 2, 2 * T - 1, 2 * T, 3 * T] {
        assert!(capacity_of(buckets) < capacity_of(buckets + 1));
        assert_eq!(buckets_for(capacity_of(buckets)), buckets);
    }
    // A table filled past the ramp: every word found, the load met.
    if cfg!(miri) {
        return;
    }
    let entries = LARGE_LOAD * 2 * T + 100_000;
    let keys: Vec<(u64, u32)> = (0..u32::try_from(entries).unwrap())
        .map(|at| (u64::from(at).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 7, at))
        .collect();
    let (table, mut writer) = (Table::new(), TableWriter::default());
    for &(hash, at) in &keys {
        table
            .insert(&mut writer, hash, Ref::from_bits(at), 0)
            .unwrap();
    }
    let buckets = Shape::unpack(table.shape.load(Ordering::Relaxed)).buckets();
    assert!(
        (entries / LARGE_LOAD - SPLITS_PER_STEP..=entries / LARGE_LOAD + 1).contains(&buckets),
        "{buckets} buckets for {entries} entries"
    );
    assert!(finds_all(&table, &keys));
}
