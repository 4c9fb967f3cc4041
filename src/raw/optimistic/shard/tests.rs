//! The shard's unit tests: inserts, walks, growth and ids; `races` has
//! readers racing a writer.

use super::*;
use crate::raw::optimistic::log::AppendError;

/// Small under Miri, which is slow.
const N: u64 = if cfg!(miri) { 300 } else { 5000 };

/// [`N`] for the tests whose lookups by id walk the log past a map that
/// nothing settled (a walk of every entry a lookup), smaller still under
/// Miri, where those walks took most of its time: 100 entries still
/// cross the first slab.
const WALKED: u64 = if cfg!(miri) { 100 } else { N };

/// Distinct for every `i`, of lengths 1 to 20.
fn key(i: u64) -> Vec<u8> {
    format!("{i}{}", "x".repeat((i % 8) as usize)).into_bytes()
}

#[test]
fn insert_find_grow() {
    let shard = RawShard::new(0);
    for i in 0..WALKED {
        assert!(shard.find_by_id(i).is_none());
        shard.write().insert(i, &key(i), true).unwrap();
        let entry = shard.find_by_id(i).unwrap();
        assert_eq!(entry.id(), i);
        assert_eq!(entry.bytes(), &key(i)[..]);
        assert_eq!(shard.find_by_bytes(&key(i)).unwrap().id(), i);
    }
    for i in 0..WALKED {
        assert_eq!(shard.find_by_id(i).unwrap().bytes(), &key(i)[..]);
        assert_eq!(shard.find_by_bytes(&key(i)).unwrap().id(), i);
    }
    assert_eq!(shard.len() as u64, WALKED);
    let mut seen = Vec::new();
    shard.for_each(|e| seen.push(e.id()));
    seen.sort_unstable();
    assert_eq!(
        seen,
        (0..WALKED).collect::<Vec<_>>(),
        "the walk sees each once"
    );
}

/// A predicted miss's insert appends before it probes: when the probe
/// finds the bytes, the append is taken back, so each record lies where a
/// log that never made that append puts it, and each entry is counted and
/// walked once.
#[test]
fn an_insert_that_finds_its_bytes_takes_its_append_back() {
    let (shard, plain) = (RawShard::new(0), RawShard::new(0));
    let mut bytes = 0;
    for i in 0..N {
        let name = key(i);
        let hash = shard.bytes_hash(&name);
        let mut writer = shard.write();
        let at = writer
            .insert_unless_found(i, &name, hash, WriteGuard::UNNUMBERED)
            .unwrap()
            .ok();
        let hash = plain.bytes_hash(&name);
        let by = ByBytes::hash(hash);
        let wanted = plain.write().insert_hashed(i, &name, Some(by), None);
        assert_eq!(at, wanted.ok(), "{i}: where the record lies");
        bytes += name.len();
        let again = key(i / 2);
        let hash = shard.bytes_hash(&again);
        let found = writer
            .insert_unless_found(i / 2, &again, hash, WriteGuard::UNNUMBERED)
            .unwrap();
        assert_eq!(found.err().map(|entry| entry.id()), Some(i / 2), "{i}");
    }
    assert_eq!((shard.len() as u64, shard.bytes()), (N, bytes));
    let mut seen = Vec::new();
    shard.for_each(|e| seen.push(e.id()));
    seen.sort_unstable();
    assert!(
        seen == (0..N).collect::<Vec<_>>(),
        "the walk sees each once"
    );
    for i in 0..N {
        assert_eq!(shard.find_by_bytes(&key(i)).unwrap().id(), i);
    }
}

/// A predicted miss whose probe finds its bytes allocates nothing, even
/// when the table's writer holds no spare overflow bucket (the insert
/// before it linked the last), whether its last pool has buckets left
/// (one is taken) or is spent: the first hit after a run of inserts is
/// predicted to miss, and a hit allocates nothing.
#[test]
fn an_insert_that_finds_its_bytes_allocates_nothing() {
    use crate::raw::alloc::refusals;
    let shard = RawShard::new(0);
    for i in 0..N {
        shard.write().insert(i, &key(i), true).unwrap();
    }
    for pool_spent in [false, true] {
        let mut writer = shard.write();
        let state = writer.writer.as_mut().expect("made");
        // The append would go first: the slab has room.
        assert!(state.log.mark_before(7, key(7).len(), false).is_some());
        let table = &mut state.table;
        table.spare.clear();
        table.recycled.clear();
        if table.pool_left == 0 {
            // A pool with buckets left, for the first round.
            table.stock_spares(1).unwrap();
            table.spare.clear();
        }
        if pool_spent {
            table.pool_left = 0;
        }
        let held = (table.pools.len(), table.spare.capacity());
        let hash = shard.bytes_hash(&key(7));
        refusals::arm();
        let before = refusals::count();
        let found = writer.insert_unless_found(7, &key(7), hash, WriteGuard::UNNUMBERED);
        let tried = refusals::count() - before;
        refusals::disarm();
        assert_eq!(found.unwrap().err().map(|entry| entry.id()), Some(7));
        assert_eq!(
            tried, 0,
            "a hit tried to allocate (pool spent: {pool_spent})"
        );
        let table = &writer.writer.as_ref().expect("made").table;
        assert_eq!((table.pools.len(), table.spare.capacity()), held);
    }
    // The next insert stocks what it needs and is found.
    shard.write().insert(N, &key(N), true).unwrap();
    assert_eq!(shard.find_by_bytes(&key(N)).unwrap().id(), N);
}

/// A placement's hash is the bytes' hash, for names of every length (the
/// mid-sized ones hashed from their chunks); prefetching its bucket reads
/// nothing, with or without a table.
#[test]
fn a_placement_is_the_bytes_hash() {
    let shard = RawShard::new(0);
    let names: Vec<Vec<u8>> = (0..100)
        .map(|len| vec![b'a' + (len % 26) as u8; len])
        .collect();
    for table in [false, true] {
        if table {
            shard.write().insert(1, b"first", true).unwrap();
        }
        for name in &names {
            let (hash, _) = shard.placement(name);
            assert_eq!(
                hash,
                shard.bytes_hash(name),
                "{table}: {} bytes",
                name.len()
            );
            shard.prefetch_bucket(hash);
        }
    }
}

#[test]
fn walks_resume_where_they_stopped() {
    let shard = RawShard::new(0);
    let mut at = 0;
    let mut seen = Vec::new();
    let rounds = if cfg!(miri) { 3 } else { 10 };
    for round in 0..rounds {
        for i in round * 100..round * 100 + 100 + round * 37 {
            if shard.find_by_id(i).is_none() {
                shard.write().insert(i, &key(i), i % 2 == 0).unwrap();
            }
        }
        settle(&shard);
        at = shard.for_each_since(at, |e| seen.push(e.id()));
    }
    let mut all = Vec::new();
    shard.for_each(|e| all.push(e.id()));
    // Newest first within a slab: the walks in rounds and the whole walk
    // order a slab's records differently, and see each once.
    seen.sort_unstable();
    all.sort_unstable();
    assert_eq!(seen, all);
    assert!(all.windows(2).all(|w| w[0] < w[1]), "no entry twice");
    assert_eq!(shard.for_each_since(at, |_| panic!("nothing new")), at);
}

/// Inserts `names` into a fresh shard (name `i` as id `i`), settling and
/// walking from where the last walk ended after every `walk_every`th
/// insert and at the end, then checks that the walks saw each record once
/// and that each is found by id and by bytes.
fn insert_and_walk(names: &[Vec<u8>], walk_every: usize) {
    let shard = RawShard::new(0);
    let mut at = 0;
    let mut seen = Vec::new();
    for (i, name) in names.iter().enumerate() {
        shard.write().insert(i as u64, name, true).unwrap();
        if (i + 1) % walk_every == 0 {
            settle(&shard);
            at = shard.for_each_since(at, |e| seen.push((e.id(), e.bytes().to_vec())));
        }
    }
    settle(&shard);
    at = shard.for_each_since(at, |e| seen.push((e.id(), e.bytes().to_vec())));
    seen.sort_unstable();
    let expected: Vec<(u64, Vec<u8>)> = names
        .iter()
        .cloned()
        .enumerate()
        .map(|(i, n)| (i as u64, n))
        .collect();
    assert!(
        seen == expected,
        "walks saw {} of {} records",
        seen.len(),
        names.len()
    );
    for (i, name) in names.iter().enumerate() {
        assert!(shard.find_by_id(i as u64).unwrap().bytes() == &name[..]);
        assert_eq!(shard.find_by_bytes(name).unwrap().id(), i as u64);
    }
    assert_eq!(shard.for_each_since(at, |_| panic!("nothing new")), at);
}

/// Records larger than a slab (each in an arena of its own) among small
/// ones, and one that fills a slab to its last byte: every record is found
/// by id and by bytes, and walks resumed between appends see each once.
#[test]
fn records_of_every_size_across_slabs() {
    use crate::raw::sizes::SLAB_BYTES;
    // A record is its length (2 bytes from 128 to 16,383), a 7-byte id and
    // the name: `SLAB_BYTES - 9` fills a slab to its last byte.
    let sizes = [
        10,
        SLAB_BYTES + 1,
        3,
        SLAB_BYTES - 20,
        3 * SLAB_BYTES,
        SLAB_BYTES - 9,
        1,
    ];
    let names: Vec<Vec<u8>> = sizes
        .iter()
        .enumerate()
        .map(|(i, &len)| (0..len).map(|b| b"abcdefgh"[(b + i) % 8]).collect())
        .collect();
    insert_and_walk(&names, 1);
}

/// A log with no slab limit opens its first slabs small (1 to 8 KiB
/// blocks): a record that fills the first to its last byte, short ones
/// across the next small ones, one too large for the next small slab (a
/// whole one) and one that fills a whole slab to its last byte are each
/// found by id and by bytes, and walks resumed between appends see each
/// once.
#[test]
fn records_across_the_first_small_slabs() {
    use crate::raw::sizes::SLAB_BYTES;
    // The first slab holds 960 bytes: a record of 2 + 7 + 951 fills it.
    let mut sizes = vec![951, 5];
    sizes.extend((0..if cfg!(miri) { 100 } else { 2_000 }).map(|i| 1 + i % 40));
    sizes.extend([9_000, 3, SLAB_BYTES - 9, 1]);
    let names: Vec<Vec<u8>> = sizes
        .iter()
        .enumerate()
        .map(|(i, &len)| {
            let mut name = format!("{i}-").into_bytes();
            name.resize(len.max(name.len()), b'a' + (i % 26) as u8);
            name
        })
        .collect();
    insert_and_walk(&names, 7);
}

/// A shard held to two slabs: a record that needs a third is refused as
/// `Full` and leaves the shard as it was; records that fit the last slab's
/// room are still stored; a refused name stored nowhere is found nowhere.
#[test]
fn a_slab_limit_refuses_only_what_needs_another_slab() {
    use crate::raw::sizes::SLAB_BYTES;
    let shard = RawShard::try_new(0, usize::MAX, 2).unwrap();
    assert_eq!(shard.write().slab_limit(), 2);
    let big = |i: u8| vec![b'a' + i; SLAB_BYTES / 2 + 100];
    shard.write().insert(1, &big(1), true).unwrap();
    shard.write().insert(2, &big(2), true).unwrap();
    assert_eq!(
        shard.write().insert(3, &big(3), true),
        Err(AppendError::Full)
    );
    assert!(shard.find_by_bytes(&big(3)).is_none());
    assert!(shard.find_by_id(3).is_none());
    assert_eq!((shard.len(), shard.bytes()), (2, 2 * big(1).len()));
    shard
        .write()
        .insert(4, b"fits the room left", true)
        .unwrap();
    assert_eq!(shard.find_by_bytes(b"fits the room left").unwrap().id(), 4);
    settle(&shard);
    let mut ids = Vec::new();
    shard.for_each(|e| ids.push(e.id()));
    ids.sort_unstable();
    assert_eq!(ids, [1, 2, 4]);
    // The layout's own limit is the most a shard may be given.
    let shard = RawShard::try_new(0, usize::MAX, usize::MAX).unwrap();
    assert_eq!(shard.write().slab_limit(), MAX_SLABS);
}

#[test]
fn caller_ids_are_not_indexed_by_bytes() {
    let shard = RawShard::new(0);
    shard.write().insert(42, b"caller", false).unwrap();
    assert!(shard.find_by_bytes(b"caller").is_none());
    assert_eq!(shard.find_by_id(42).unwrap().bytes(), b"caller");
    let mut writer = shard.write();
    let entry = writer.find_by_id(42, |_, _, _| panic!("no conflict"));
    assert_eq!(entry.unwrap().unwrap().bytes(), b"caller");
    drop(writer);
    let mut count = 0;
    shard.for_each(|_| count += 1);
    assert_eq!(count, 1);
}

/// Conflicts found by settling, in log order: `(id, kept, rejected)`.
fn settle(shard: &RawShard) -> Vec<(u64, Vec<u8>, Vec<u8>)> {
    let mut found = Vec::new();
    shard
        .settle(|id, kept, rejected| found.push((id, kept.to_vec(), rejected.to_vec())))
        .unwrap();
    found
}

#[test]
fn settling_keeps_the_first_entry_of_an_id_within_and_across_slabs() {
    use crate::raw::sizes::SLAB_BYTES;
    let shard = RawShard::new(0);
    // Within one slab: "a", then "b" and "a" again under its id (as
    // misses that never look an id up append them), and other entries.
    shard.write().insert_hashed(7, b"a", None, None).unwrap();
    shard.write().insert_hashed(8, b"c", None, None).unwrap();
    shard.write().insert_hashed(7, b"b", None, None).unwrap();
    shard.write().insert_hashed(7, b"a", None, None).unwrap();
    // Found by a reader before any settle: the earliest, though a walk
    // meets a slab's entries newest first.
    assert_eq!(shard.find_by_id(7).unwrap().bytes(), b"a");
    assert_eq!(settle(&shard), [(7, b"a".to_vec(), b"b".to_vec())]);
    assert!(settle(&shard).is_empty(), "each conflict is found once");
    let mut walked = Vec::new();
    shard.for_each(|e| walked.push((e.id(), e.bytes().to_vec())));
    walked.sort_unstable();
    assert_eq!(walked, [(7, b"a".to_vec()), (8, b"c".to_vec())]);
    // Across slabs, and past rebuilds of the map: an id held in an
    // earlier slab, met again in later ones, some settles apart.
    let filler = vec![b'f'; SLAB_BYTES / 3];
    for i in 0..N {
        if i % 500 == 0 {
            shard
                .write()
                .insert_hashed(7, format!("z{i}").as_bytes(), None, None)
                .unwrap();
            shard
                .write()
                .insert_hashed(1000 + i, &filler, None, None)
                .unwrap();
        }
        shard
            .write()
            .insert_hashed(10_000 + i, &key(i), None, None)
            .unwrap();
        if i % 1000 == 999 {
            let found = settle(&shard);
            assert_eq!(found.len(), 2);
            assert!(found.iter().all(|(id, kept, _)| *id == 7 && kept == b"a"));
        }
    }
    settle(&shard);
    assert_eq!(shard.find_by_id(7).unwrap().bytes(), b"a");
    let mut sevens = 0;
    let mut all = 0;
    shard.for_each(|e| {
        sevens += usize::from(e.id() == 7);
        all += 1;
    });
    assert_eq!(sevens, 1, "a walk skips the later entries of an id");
    assert_eq!(all as u64, 2 + N + N.div_ceil(500));
}

/// The map answers, without a settle, only for what it holds, and then
/// with an id's first entry, whatever was appended under the id since; what
/// it lacks is left to `find_by_id`, which walks it.
#[test]
fn the_map_alone_answers_with_the_first_entry_it_holds() {
    let shard = RawShard::new(0);
    assert!(shard.find_mapped_by_id(7).is_none(), "nothing published");
    shard.write().insert_hashed(7, b"a", None, None).unwrap();
    assert!(shard.find_mapped_by_id(7).is_none(), "not settled yet");
    assert!(settle(&shard).is_empty());
    // Appended after the settle: a conflicting string under 7, and 8.
    shard.write().insert_hashed(7, b"b", None, None).unwrap();
    shard.write().insert_hashed(8, b"c", None, None).unwrap();
    assert_eq!(shard.find_mapped_by_id(7).unwrap().bytes(), b"a");
    assert!(shard.find_mapped_by_id(8).is_none());
    assert_eq!(shard.find_by_id(8).unwrap().bytes(), b"c");
    // The conflict is found by the next settle, once.
    assert_eq!(settle(&shard), [(7, b"a".to_vec(), b"b".to_vec())]);
    assert_eq!(shard.find_mapped_by_id(7).unwrap().bytes(), b"a");
    assert_eq!(shard.find_mapped_by_id(8).unwrap().bytes(), b"c");
}

/// Where `find_ref_where` finds `bytes`, indexed under their hash.
fn ref_of_bytes(shard: &RawShard, bytes: &[u8]) -> Ref {
    let (at, _) = shard
        .find_ref_where(shard.bytes_hash(bytes), |stored| stored == bytes)
        .unwrap();
    at
}

/// The side tells, without the map's lock, that every entry a settle
/// reached holds its id first, the last one included; an entry appended
/// since is not known so; once a settle finds an entry shadowed, every
/// answer goes through the map, which still tells the first holder from
/// the shadowed entry.
#[test]
fn the_side_knows_first_holders_up_to_the_settled_end() {
    let shard = RawShard::new(0);
    for i in 0..N {
        shard.write().insert(i, &key(i), true).unwrap();
    }
    assert!(settle(&shard).is_empty());
    // SAFETY: entries are published, so the side is made.
    let side = unsafe { shard.id_side() }.unwrap();
    for i in 0..N {
        assert!(side.holds_first(ref_of_bytes(&shard, &key(i))), "entry {i}");
        assert_eq!(shard.find_first_by_bytes(&key(i)).unwrap().id(), i);
    }
    shard.write().insert(N, &key(N), true).unwrap();
    assert!(!side.holds_first(ref_of_bytes(&shard, &key(N))));
    assert_eq!(shard.find_first_by_bytes(&key(N)).err(), Some(true));
    // Other bytes under id 0: shadowed once settled.
    shard.write().insert(0, b"other", true).unwrap();
    assert_eq!(settle(&shard).len(), 1);
    assert!(!side.holds_first(ref_of_bytes(&shard, &key(0))));
    assert_eq!(shard.find_first_by_bytes(&key(0)).unwrap().id(), 0);
    assert_eq!(shard.find_first_by_bytes(&key(N)).unwrap().id(), N);
    assert_eq!(shard.find_first_by_bytes(b"other").err(), Some(true));
}

#[test]
fn walks_go_as_far_as_the_map_is_settled() {
    let shard = RawShard::new(0);
    shard.write().insert(1, b"one", true).unwrap();
    assert_eq!(shard.for_each_since(0, |_| panic!("nothing settled")), 0);
    settle(&shard);
    shard.write().insert(2, b"two", true).unwrap();
    let mut seen = Vec::new();
    let at = shard.for_each_since(0, |e| seen.push(e.id()));
    assert_eq!(seen, [1]);
    settle(&shard);
    let at = shard.for_each_since(at, |e| seen.push(e.id()));
    assert_eq!(seen, [1, 2]);
    assert_eq!(shard.for_each_since(at, |_| panic!("nothing new")), at);
}

#[test]
fn ids_zero_and_max() {
    let shard = RawShard::new(4);
    shard.write().insert(0, b"zero", false).unwrap();
    assert!(shard.find_by_id(u64::MAX).is_none());
    shard.write().insert(u64::MAX, b"max", false).unwrap();
    assert_eq!(shard.find_by_id(0).unwrap().bytes(), b"zero");
    assert_eq!(shard.find_by_id(u64::MAX).unwrap().bytes(), b"max");
    // A wide id's record is longer: the walk steps over it exactly.
    shard.write().insert(1 << 60, b"wide", true).unwrap();
    shard.write().insert(5, b"after", true).unwrap();
    let mut walked = Vec::new();
    shard.for_each(|e| walked.push((e.id(), e.bytes().to_vec())));
    walked.sort_unstable();
    let expected: [(u64, &[u8]); 4] = [
        (0, b"zero"),
        (5, b"after"),
        (1 << 60, b"wide"),
        (u64::MAX, b"max"),
    ];
    assert_eq!(walked.len(), expected.len());
    for ((id, bytes), (want_id, want_bytes)) in walked.iter().zip(expected) {
        assert_eq!((*id, &bytes[..]), (want_id, want_bytes));
    }
    assert_eq!(shard.find_by_bytes(b"wide").unwrap().id(), 1 << 60);
}

#[test]
fn entries_outlive_growth() {
    let shard = RawShard::new(0);
    shard.write().insert(7, b"seven", true).unwrap();
    let early = shard.find_by_id(7).unwrap().bytes();
    for i in 100..100 + N {
        shard.write().insert(i, &key(i), true).unwrap();
    }
    assert_eq!(early, b"seven", "growth keeps entries in place");
    assert_eq!(shard.find_by_bytes(b"seven").unwrap().id(), 7);
}

#[test]
fn empty_and_large_entries() {
    let shard = RawShard::new(1);
    shard.write().insert(1, b"", true).unwrap();
    let big = vec![0xAB; 100_000];
    shard.write().insert(2, &big, true).unwrap();
    shard.write().insert(3, b"after the big one", true).unwrap();
    assert_eq!(shard.find_by_id(1).unwrap().bytes(), b"");
    assert_eq!(shard.find_by_bytes(b"").unwrap().id(), 1);
    assert_eq!(shard.find_by_bytes(&big).unwrap().id(), 2);
    assert_eq!(shard.find_by_bytes(b"after the big one").unwrap().id(), 3);
    assert_eq!(shard.bytes(), 100_017);
    let mut ids = Vec::new();
    shard.for_each(|e| ids.push(e.id()));
    assert_eq!(ids, [1, 2, 3]);
}

#[test]
fn batch_lookups_agree_with_single_ones() {
    let shard = RawShard::new(0);
    for i in 0..N / 2 {
        shard.write().insert(i, &key(i), true).unwrap();
    }
    let names: Vec<Vec<u8>> = (0..N).map(key).collect();
    let mut ids = vec![7; names.len()];
    shard.find_ids_by_bytes(&names, &mut ids);
    for (i, &id) in ids.iter().enumerate() {
        // Key 0 is stored under id 0, which reads as "not found" here.
        let expected = if (i as u64) < N / 2 { i as u64 } else { 0 };
        assert_eq!(id, expected, "name {i}");
    }
}

#[test]
fn ids_are_found_after_inserts_that_never_looked_one_up() {
    // Nothing looks an id up while these go in, nor settles the map: a
    // reader finds each by walking past the (empty) map.
    let shard = RawShard::new(0);
    for i in 0..WALKED {
        shard.write().insert_hashed(i, &key(i), None, None).unwrap();
    }
    for i in (0..WALKED).rev() {
        assert_eq!(shard.find_by_id(i).unwrap().bytes(), &key(i)[..]);
    }
    assert!(shard.find_by_id(WALKED).is_none());
}

#[test]
fn crafted_ids_do_not_chain() {
    // Sequential and multiplier-structured ids place like any others: the
    // by-id map mixes them with a per-shard seed.
    let shard = RawShard::new(0);
    for i in 0..WALKED {
        let id = i.wrapping_mul(0x9E37_79B9_7F4A_7C15) << 20;
        shard.write().insert(id, &key(i), false).unwrap();
    }
    for i in 0..WALKED {
        let id = i.wrapping_mul(0x9E37_79B9_7F4A_7C15) << 20;
        assert_eq!(shard.find_by_id(id).unwrap().bytes(), &key(i)[..]);
    }
}

mod races;
