//! The striped shard's unit tests: first-wins and conflicts across
//! stripes, walks, the settle's bound, numbers across the wrap, and the
//! predicted miss's numbered append.

use super::*;

fn shard(stripes: usize) -> StripedShard {
    StripedShard::try_new(stripes, 0, usize::MAX, crate::raw::MAX_SLABS).unwrap()
}

fn insert(shard: &StripedShard, id: u64, bytes: &[u8]) -> Place {
    let hash = shard.bytes_hash(bytes);
    let mut guard = shard.write(hash);
    let by = guard.find_by_hash(hash, bytes).err().unwrap();
    guard.insert(id, bytes, Some(by)).unwrap().place
}

fn conflicts(shard: &StripedShard) -> Vec<(u64, Vec<u8>, Vec<u8>)> {
    let mut found = Vec::new();
    shard
        .settle(None, |id, kept, rejected| {
            found.push((id, kept.to_vec(), rejected.to_vec()))
        })
        .unwrap();
    found
}

#[test]
fn the_first_of_an_id_wins_across_stripes_and_conflicts_keep_their_order() {
    let shard = shard(16);
    let names: Vec<Vec<u8>> = (0..400).map(|i| format!("name-{i}").into_bytes()).collect();
    // Ids collide in pairs: name 2k and 2k + 1 share id k + 1.
    for (i, name) in names.iter().enumerate() {
        insert(&shard, i as u64 / 2 + 1, name);
        if i == 150 {
            // A settle part-way: what it took stays decided.
            assert_eq!(conflicts(&shard).len(), 75);
        }
    }
    let found = conflicts(&shard);
    assert_eq!(found.len(), 125);
    for (k, (id, kept, rejected)) in found.iter().enumerate() {
        let pair = 75 + k;
        assert_eq!(*id, pair as u64 + 1);
        assert_eq!(kept, &names[2 * pair]);
        assert_eq!(rejected, &names[2 * pair + 1]);
    }
    for pair in 0..200 {
        let (_, entry) = shard.find_mapped(pair as u64 + 1).unwrap();
        assert_eq!(entry.bytes(), &names[2 * pair][..]);
    }
    assert_eq!(
        shard.held(),
        (200, names.iter().step_by(2).map(Vec::len).sum())
    );
}

#[test]
fn walks_see_each_settled_entry_once_in_settle_order() {
    let shard = shard(4);
    for i in 0..200u64 {
        insert(&shard, i + 1, format!("w{i}").as_bytes());
    }
    shard.settle(None, |_, _, _| unreachable!()).unwrap();
    let mut seen = Vec::new();
    let middle = shard.walk_settled(0, |entry| seen.push(entry.id()));
    for i in 200..300u64 {
        insert(&shard, i + 1, format!("w{i}").as_bytes());
    }
    shard.settle(None, |_, _, _| unreachable!()).unwrap();
    let end = shard.walk_settled(middle, |entry| seen.push(entry.id()));
    assert_eq!((middle, end), (200, 300));
    assert_eq!(seen, (1..=300).collect::<Vec<_>>());
    assert_eq!(shard.walk_settled(end, |_| unreachable!()), end);
}

#[test]
fn a_record_numbered_past_the_bound_waits_for_the_next_settle() {
    let shard = shard(2);
    insert(&shard, 1, b"early");
    let late = insert(&shard, 1, b"late");
    // As if the bound had been loaded before "late" was numbered.
    let next = shard.next.0.load(Ordering::Relaxed);
    shard.next.0.store(next.wrapping_sub(1), Ordering::Relaxed);
    assert_eq!(conflicts(&shard), vec![]);
    assert_eq!(shard.held(), (1, 5));
    shard.next.0.store(next, Ordering::Relaxed);
    assert_eq!(
        conflicts(&shard),
        vec![(1, b"early".to_vec(), b"late".to_vec())]
    );
    assert!(shard.find_mapped(1).unwrap().0 != late);
    assert_eq!(shard.held(), (1, 5));
}

#[test]
fn numbers_cross_the_wrap_in_order() {
    let shard = shard(8);
    // FIRST_NUMBER is 256 below the wrap: 400 inserts cross it.
    for i in 0..400u64 {
        insert(&shard, i % 200 + 1, format!("x{i}").as_bytes());
    }
    assert_pairs_conflict_in_order(&shard);
}

/// Settles `shard`, into which `x{i}` was interned under id `i % 200 + 1`
/// for `i` in `0..400` in that order: each id's first string is kept and
/// the second is its conflict, in the ids' order.
fn assert_pairs_conflict_in_order(shard: &StripedShard) {
    let found = conflicts(shard);
    assert_eq!(found.len(), 200);
    for (k, (id, kept, rejected)) in found.iter().enumerate() {
        assert_eq!(*id, k as u64 + 1);
        assert_eq!(kept, format!("x{k}").as_bytes());
        assert_eq!(rejected, format!("x{}", k + 200).as_bytes());
    }
}

/// A predicted miss's numbered append before its probe
/// ([`StripeGuard::insert_unless_found`]): where the stripe holds the
/// bytes, the append is taken back and its number spent. The records
/// taken keep the calls' order, first-wins and the conflicts' order, as
/// with `insert`, across the numbers' wrap, and the number that asks for
/// a settle is reported once, by whichever call took it.
#[test]
fn an_insert_that_finds_its_bytes_takes_its_numbered_append_back() {
    let shard = shard(8);
    let mut settles = 0;
    let id = |i: u64| i % 200 + 1;
    // FIRST_NUMBER is 256 below the wrap: the 400 names and the appends
    // taken back cross it.
    for i in 0..400u64 {
        let name = format!("x{i}");
        let hash = shard.bytes_hash(name.as_bytes());
        let mut guard = shard.write(hash);
        let outcome = guard.insert_unless_found(id(i), name.as_bytes(), hash);
        let inserted = outcome.unwrap().ok().expect("absent");
        drop(guard);
        settles += usize::from(inserted.settle);
        let again = format!("x{}", i / 2);
        let hash = shard.bytes_hash(again.as_bytes());
        let mut guard = shard.write(hash);
        let outcome = guard.insert_unless_found(id(i / 2), again.as_bytes(), hash);
        let found = outcome.unwrap().expect_err("present");
        assert_eq!(found.entry.bytes(), again.as_bytes(), "{i}");
        drop(guard);
        settles += usize::from(found.settle);
    }
    assert_eq!(settles, 1, "one number, 0, asks for a settle");
    assert_pairs_conflict_in_order(&shard);
    let mut seen = Vec::new();
    assert_eq!(shard.walk_settled(0, |entry| seen.push(entry.id())), 200);
    assert_eq!(seen, (1..=200).collect::<Vec<_>>());
    for i in 0..400u64 {
        let name = format!("x{i}");
        let entry = shard.find_by_hash(shard.bytes_hash(name.as_bytes()), name.as_bytes());
        assert_eq!(entry.map(|entry| entry.id()), Some(id(i)), "{i}");
    }
}

/// A taken-back append whose spent number asks for a settle says so, and
/// the gap it leaves holds no settle up.
#[test]
fn a_spent_number_that_asks_for_a_settle_says_so() {
    let shard = shard(1);
    insert(&shard, 1, b"a");
    // The next number asks for a settle.
    shard.next.0.store(0, Ordering::Relaxed);
    let hash = shard.bytes_hash(b"a");
    let mut guard = shard.write(hash);
    let found = guard.insert_unless_found(1, b"a", hash).unwrap();
    let found = found.expect_err("present");
    drop(guard);
    assert!(found.settle);
    assert_eq!(shard.next.0.load(Ordering::Relaxed), 1, "its number spent");
    insert(&shard, 1, b"b");
    assert_eq!(conflicts(&shard), vec![(1, b"a".to_vec(), b"b".to_vec())]);
    assert_eq!(shard.held(), (1, 1));
}

/// An append refused after it took a number that asks for a settle says
/// so, by either insert, so that the caller settles (else a record
/// published after the last settle could wait past a settle's window).
#[test]
fn a_refused_append_whose_number_asks_for_a_settle_says_so() {
    use crate::raw::refusals;
    for predicted in [false, true] {
        // A fresh stripe: its first append makes the writer's state, which
        // the armed refusals refuse, after the number is taken.
        let shard = shard(1);
        shard.next.0.store(0, Ordering::Relaxed);
        let hash = shard.bytes_hash(b"a");
        let mut guard = shard.write(hash);
        refusals::arm();
        let refused = if predicted {
            guard.insert_unless_found(1, b"a", hash).map(drop)
        } else {
            let by = ByBytes::hash(hash);
            guard.insert(1, b"a", Some(by)).map(drop)
        };
        refusals::disarm();
        drop(guard);
        let refused = refused.expect_err("refused");
        assert!(refused.settle, "{predicted}");
        assert_eq!(
            shard.next.0.load(Ordering::Relaxed),
            1,
            "{predicted}: spent"
        );
        assert_eq!(conflicts(&shard), vec![]);
        assert_eq!(shard.held(), (0, 0));
        // The stripe is unchanged: the next insert goes in.
        insert(&shard, 2, b"b");
        assert_eq!(conflicts(&shard), vec![]);
        assert_eq!(shard.held(), (1, 1));
    }
}
