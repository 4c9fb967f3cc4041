//! Differential test: every strategy against the reference, `RwLockStrategy`.
//! The same seeded random operation sequences (SplitMix64, seeds 0 to 299,
//! 0 to 99 in a debug build, 120 operations each) run on a db of each: `intern`, `intern_bytes`,
//! `intern_with_outcome`, `intern_batch`, `register` with caller ids (0 and
//! `u64::MAX` too), `lookup_bytes`, `resolve`, `with_resolved`,
//! `resolve_any`, `close_nc`, `open_nc`, `snapshot`, `delta` on two
//! cursors, `save_delta` saved (and loaded back) or failing, on the db or on
//! another one, `nc_len`, `nc_bytes`, `is_open`, `total_entries`,
//! `conflicts`, `conflict_count`, `conflicts_dropped` and `reset`. Every
//! answer, and every snapshot and delta whole (ids, bytes, conflicts,
//! conflicts dropped), must be the reference's. NCs out of range are
//! operations too; a narrow id mask makes conflicts common, within NCs and
//! across them; odd seeds run under a 12-byte cap and a 600-byte conflict
//! budget.
//!
//! Then threads, where the outcome does not depend on the interleaving: each
//! thread interning, registering and batching into its own NC (so its
//! conflicts are its own); every thread interning the same names into one
//! NC with real ids while deltas are taken; or threads taking turns in one
//! NC with colliding names, each call ordered before the next by a lock.
//! The final states (and the deltas' union), and in turns every answer,
//! must be the reference's.

use std::path::PathBuf;

use interned_string_db::{Config, Cursor, InternedStringDb, RwLockStrategy, Strategy};

const NCS: usize = 3;
const MASK: u64 = 0b111;
/// Sequences per strategy, and operations per sequence.
/// The seeds run: fewer in a debug build, to stay within a minute (odd
/// and even alike, so both configurations still run).
const SEQUENCES: u64 = if cfg!(debug_assertions) { 100 } else { 300 };
const STEPS: usize = 120;

/// SplitMix64: a small, seeded generator.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    /// An NC, one past the last sometimes (out of range is an operation too).
    fn nc(&mut self) -> usize {
        self.below(NCS as u64 + 1) as usize
    }

    /// A short string of `a`, `b`, `c` (empty sometimes).
    fn text(&mut self) -> String {
        let len = self.below(4);
        (0..len)
            .map(|_| char::from(b'a' + self.below(3) as u8))
            .collect()
    }

    /// Short bytes that need not be UTF-8.
    fn bytes(&mut self) -> Vec<u8> {
        let len = self.below(4);
        (0..len)
            .map(|_| [b'a', b'b', 0xff][self.below(3) as usize])
            .collect()
    }

    /// A caller's id: usually in the mask's range, sometimes 0 or wide.
    fn id(&mut self) -> u64 {
        match self.below(10) {
            0 => 0,
            1 => u64::MAX,
            _ => 1 + self.below(MASK + 2),
        }
    }
}

/// One side of the comparison: a db, its cursors, and a second db that a
/// cursor visits (where it starts over) and comes back from.
struct Side<S: Strategy> {
    db: InternedStringDb<S>,
    cursors: [Cursor; 2],
    other: InternedStringDb<S>,
}

impl<S: Strategy> Side<S> {
    fn new(config: Config) -> Self {
        let other = InternedStringDb::with_config(config);
        other.intern(0, "elsewhere").unwrap();
        Side {
            db: InternedStringDb::with_config(config),
            cursors: [Cursor::new(), Cursor::new()],
            other,
        }
    }
}

/// A directory of its own under the target directory, emptied.
fn scratch(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("differential-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Runs one operation, chosen by `rng`, on both sides; returns what each
/// answered, formatted (`Debug` of the whole answer), and what the
/// operation was.
fn step<S: Strategy>(
    rng: &mut Rng,
    ours: &mut Side<S>,
    theirs: &mut Side<RwLockStrategy>,
    dir: &std::path::Path,
) -> (String, String, String) {
    macro_rules! both {
        ($what:expr, |$side:ident| $body:expr) => {{
            let a = {
                let $side = &mut *ours;
                format!("{:?}", $body)
            };
            let b = {
                let $side = &mut *theirs;
                format!("{:?}", $body)
            };
            (a, b, $what)
        }};
    }
    match rng.below(22) {
        0..=3 => {
            let (nc, s) = (rng.nc(), rng.text());
            both!(format!("intern({nc}, {s:?})"), |side| side
                .db
                .intern(nc, &s))
        }
        4 => {
            // The hit path (`intern_bytes`) and the outcome's.
            let (nc, s) = (rng.nc(), rng.bytes());
            both!(format!("intern_bytes({nc}, {s:?})"), |side| (
                side.db.intern_bytes(nc, &s),
                side.db.intern_with_outcome(nc, &s)
            ))
        }
        5 | 6 => {
            let (nc, id, s) = (rng.nc(), rng.id(), rng.bytes());
            both!(format!("register({nc}, {id}, {s:?})"), |side| side
                .db
                .register(nc, id, &s))
        }
        7 => {
            let nc = rng.nc();
            let names: Vec<Vec<u8>> = (0..rng.below(6)).map(|_| rng.bytes()).collect();
            both!(format!("intern_batch({nc}, {names:?})"), |side| {
                batch_answer(&side.db, nc, &names)
            })
        }
        8 => {
            let (nc, s) = (rng.nc(), rng.bytes());
            both!(format!("lookup_bytes({nc}, {s:?})"), |side| side
                .db
                .lookup_bytes(nc, &s))
        }
        9 => {
            let (nc, id) = (rng.nc(), rng.id());
            both!(format!("resolve({nc}, {id})"), |side| (
                side.db.resolve(nc, id),
                side.db.with_resolved(nc, id, <[u8]>::len)
            ))
        }
        10 => {
            let id = rng.id();
            both!(format!("resolve_any({id})"), |side| side.db.resolve_any(id))
        }
        11 => {
            let nc = rng.nc();
            both!(format!("close_nc({nc})"), |side| side.db.close_nc(nc))
        }
        12 | 13 => {
            let nc = rng.nc();
            both!(format!("open_nc({nc})"), |side| side.db.open_nc(nc))
        }
        14 | 15 => both!("snapshot".to_owned(), |side| side.db.snapshot()),
        16 | 17 => {
            let c = rng.below(2) as usize;
            both!(format!("delta(cursor {c})"), |side| {
                let delta = side.db.delta(&mut side.cursors[c]);
                (delta, side.cursors[c].delivered())
            })
        }
        18 => {
            // Saved and loaded back, or failing (the cursor rewound), on
            // this db or on the other one.
            let (c, saved, here) = (rng.below(2) as usize, rng.below(2) == 0, rng.below(3) > 0);
            let path = if saved {
                dir.join("delta")
            } else {
                dir.join("no such directory").join("delta")
            };
            both!(
                format!("save_delta(cursor {c}, saved {saved}, this db {here})"),
                |side| {
                    let cursor = &mut side.cursors[c];
                    let result = if here {
                        side.db.save_delta(cursor, &path)
                    } else {
                        side.other.save_delta(cursor, &path)
                    };
                    let loaded = result.as_ref().ok().map(|_| {
                        interned_string_db::Snapshot::load(&path).map_err(|e| e.to_string())
                    });
                    (result.map_err(|e| e.kind()), loaded, cursor.delivered())
                }
            )
        }
        19 => {
            let nc = rng.nc();
            both!(format!("counters({nc})"), |side| (
                side.db.nc_len(nc),
                side.db.nc_bytes(nc),
                side.db.is_open(nc),
                side.db.total_entries(),
            ))
        }
        20 => both!("conflicts".to_owned(), |side| (
            side.db.conflicts(),
            side.db.conflict_count(),
            side.db.conflicts_dropped(),
        )),
        _ => {
            if rng.below(4) == 0 {
                both!("reset".to_owned(), |side| side.db.reset())
            } else {
                both!("snapshot again".to_owned(), |side| side.db.snapshot())
            }
        }
    }
}

/// Random sequences on `S` and on the reference agree, answer by answer.
fn agrees_with_the_reference<S: Strategy>() {
    let dir = scratch(S::NAME);
    for seed in 0..SEQUENCES {
        let mut rng = Rng(seed);
        let mut config = Config::new()
            .ncs(NCS)
            .narrow_id_mask_for_tests(MASK)
            .conflict_budget(usize::MAX);
        if seed % 2 == 1 {
            config = config.byte_cap(12).conflict_budget(600);
        }
        let mut ours = Side::<S>::new(config);
        let mut theirs = Side::<RwLockStrategy>::new(config);
        let mut done = Vec::new();
        for at in 0..STEPS {
            let (a, b, what) = step(&mut rng, &mut ours, &mut theirs, &dir);
            done.push(what);
            assert_eq!(
                a,
                b,
                "{} and rwlock disagree: seed {seed}, step {at}, after {:?}",
                S::NAME,
                done
            );
        }
        // Whatever the sequence left, the deltas still to come agree too.
        for c in 0..2 {
            assert_eq!(
                ours.db.delta(&mut ours.cursors[c]),
                theirs.db.delta(&mut theirs.cursors[c]),
                "{}: seed {seed}, the last delta of cursor {c}",
                S::NAME
            );
        }
    }
}

/// Threads, each interning its own names, registering caller ids (conflicts,
/// within its NC and across NCs) and batching into its own NC: the final
/// snapshot, conflicts and counters are the reference's, whose NCs were
/// filled one after another.
fn threads_on_their_own_ncs_end_as_the_reference<S: Strategy>() {
    const THREADS: usize = 4;
    const PER_THREAD: u64 = 3_000;
    let config = Config::new()
        .ncs(THREADS)
        .narrow_id_mask_for_tests(0x3FF)
        .conflict_budget(16 << 10);
    let work = |t: usize, rng: &mut Rng, intern: &mut dyn FnMut(usize, Op)| {
        for _ in 0..PER_THREAD {
            let op = match rng.below(4) {
                0 | 1 => Op::Intern(rng.text() + &rng.text()),
                2 => Op::Register(rng.id(), rng.bytes()),
                _ => Op::Batch((0..3).map(|_| rng.text()).collect()),
            };
            intern(t, op);
        }
    };
    let ours: InternedStringDb<S> = InternedStringDb::with_config(config);
    std::thread::scope(|s| {
        for t in 0..THREADS {
            let ours = &ours;
            s.spawn(move || {
                let mut rng = Rng(t as u64);
                work(t, &mut rng, &mut |nc, op| apply(ours, nc, op));
            });
        }
    });
    let theirs: InternedStringDb<RwLockStrategy> = InternedStringDb::with_config(config);
    for t in 0..THREADS {
        let mut rng = Rng(t as u64);
        work(t, &mut rng, &mut |nc, op| apply(&theirs, nc, op));
    }
    let (a, b) = (ours.snapshot(), theirs.snapshot());
    assert!(a.iter().eq(b.iter()), "{}: the entries", S::NAME);
    assert_eq!(a.conflicts(), b.conflicts(), "{}", S::NAME);
    assert_eq!(ours.conflicts(), theirs.conflicts(), "{}", S::NAME);
    assert_same_drops::<S>(a.conflicts_dropped(), b.conflicts_dropped());
    assert_same_drops::<S>(ours.conflicts_dropped(), theirs.conflicts_dropped());
    for nc in 0..THREADS {
        assert_eq!(ours.nc_len(nc), theirs.nc_len(nc), "{}: NC {nc}", S::NAME);
        assert_eq!(
            ours.nc_bytes(nc),
            theirs.nc_bytes(nc),
            "{}: NC {nc}",
            S::NAME
        );
    }
    let (a, b) = (
        ours.delta(&mut Cursor::new()),
        theirs.delta(&mut Cursor::new()),
    );
    assert!(a.iter().eq(b.iter()) && a.conflicts() == b.conflicts());
    assert_same_drops::<S>(a.conflicts_dropped(), b.conflicts_dropped());
}

/// `a`, ours, and `b`, the reference's, count the same conflicts dropped
/// past their budgets, as the reference counts them: each call that met a
/// conflict past the budget. A strategy that finds conflicts lazily
/// (`Strategy::FINDS_CONFLICTS_LAZILY`) meets a string appended once
/// however often it is interned again (the later calls are hits): it counts
/// at most as many, and some when the reference counts some.
fn assert_same_drops<S: Strategy>(a: u64, b: u64) {
    if S::FINDS_CONFLICTS_LAZILY {
        assert!(
            a <= b && (a > 0) == (b > 0),
            "{}: {a} dropped, the reference {b}",
            S::NAME
        );
    } else {
        assert_eq!(a, b, "{}: conflicts dropped", S::NAME);
    }
}
/// `intern_batch`'s answer: its result, and the ids it wrote (on an error,
/// only those before the failing name are).
fn batch_answer<S: Strategy, B: AsRef<[u8]>>(
    db: &InternedStringDb<S>,
    nc: usize,
    names: &[B],
) -> (Result<(), interned_string_db::BatchError>, Vec<u64>) {
    let mut ids = vec![0; names.len()];
    let result = db.intern_batch(nc, names, &mut ids);
    if let Err(interned_string_db::BatchError::At { index, .. }) = &result {
        ids.truncate(*index);
    }
    (result, ids)
}

/// What a thread of the test above does.
enum Op {
    Intern(String),
    Register(u64, Vec<u8>),
    Batch(Vec<String>),
}

fn apply<S: Strategy>(db: &InternedStringDb<S>, nc: usize, op: Op) {
    match op {
        Op::Intern(s) => {
            let _ = db.intern(nc, &s);
        }
        Op::Register(id, s) => {
            let _ = db.register(nc, id, &s);
        }
        Op::Batch(names) => {
            let mut ids = vec![0; names.len()];
            let _ = db.intern_batch(nc, &names, &mut ids);
        }
    }
}

/// Threads interning the same names (real ids, so no conflicts) into one NC
/// and a few of their own, with batches, while another takes deltas: every
/// id is the reference's, and the final snapshot, counters and the deltas'
/// union are the reference's.
fn threads_on_shared_names_end_as_the_reference<S: Strategy>() {
    const THREADS: usize = 4;
    const NAMES: usize = 1_500;
    let names: Vec<String> = (0..NAMES).map(|i| crate::common::name(0, i)).collect();
    let config = Config::new().ncs(2);
    let ours: InternedStringDb<S> = InternedStringDb::with_config(config);
    let theirs: InternedStringDb<RwLockStrategy> = InternedStringDb::with_config(config);
    let mut deltas = Vec::new();
    std::thread::scope(|s| {
        let workers: Vec<_> = (0..THREADS)
            .map(|t| {
                let (ours, theirs, names) = (&ours, &theirs, &names);
                s.spawn(move || {
                    // Each thread from its own starting point, so that every
                    // name is raced for.
                    for i in 0..NAMES {
                        let name = &names[(i + t * NAMES / THREADS) % NAMES];
                        assert_eq!(ours.intern(0, name), theirs.intern(0, name));
                        if i % 50 == 0 {
                            let batch = &names[i..(i + 20).min(NAMES)];
                            let (mut a, mut b) = (vec![0; batch.len()], vec![0; batch.len()]);
                            ours.intern_batch(0, batch, &mut a).unwrap();
                            theirs.intern_batch(0, batch, &mut b).unwrap();
                            assert_eq!(a, b);
                            let own = format!("thread {t} name {i}");
                            assert_eq!(ours.intern(1, &own), theirs.intern(1, &own));
                        }
                    }
                })
            })
            .collect();
        // Only the deltas that hold something: most are empty, and there
        // may be millions of them.
        let mut cursor = Cursor::new();
        let mut take = |delta: interned_string_db::Snapshot| {
            if !delta.is_empty() {
                deltas.push(delta);
            }
        };
        while !workers.iter().all(|w| w.is_finished()) {
            take(ours.delta(&mut cursor));
        }
        take(ours.delta(&mut cursor));
    });
    let snapshot = ours.snapshot();
    assert_eq!(snapshot, theirs.snapshot(), "{}", S::NAME);
    assert!(snapshot.conflicts().is_empty());
    assert_eq!(interned_string_db::Snapshot::merge(&deltas), snapshot);
    for nc in 0..2 {
        assert_eq!(ours.nc_len(nc), theirs.nc_len(nc), "{}: NC {nc}", S::NAME);
        assert_eq!(
            ours.nc_bytes(nc),
            theirs.nc_bytes(nc),
            "{}: NC {nc}",
            S::NAME
        );
    }
}

/// Threads taking turns in one NC (a turn passed under a lock, so each
/// call happens before the next thread's), interning, registering, asking
/// outcomes and batching colliding names (a narrow id mask): every answer,
/// the final snapshot, conflicts and counters are the reference's, run in
/// the same order on one thread. Which string of an id wins, and the order
/// of the conflicts, follow the calls' order across threads as within one:
/// what a writer that orders entries by anything but time would break.
fn threads_taking_turns_in_one_nc_end_as_the_reference<S: Strategy>() {
    const THREADS: usize = 3;
    const TURNS: usize = 1_500;
    let config = Config::new()
        .ncs(1)
        .narrow_id_mask_for_tests(0x3F)
        .conflict_budget(16 << 10);
    let mut rng = Rng(7);
    let ops: Vec<TurnOp> = (0..TURNS)
        .map(|_| match rng.below(5) {
            0 | 1 => TurnOp::Intern(rng.text() + &rng.text() + &rng.text()),
            2 => TurnOp::Outcome(rng.text() + &rng.text()),
            3 => TurnOp::Register(rng.id(), rng.bytes()),
            _ => TurnOp::Batch((0..3).map(|_| rng.text() + &rng.text()).collect()),
        })
        .collect();
    let ours: InternedStringDb<S> = InternedStringDb::with_config(config);
    // The turn (the index of the next call) and each call's answer.
    let turn = std::sync::Mutex::new(0usize);
    let passed = std::sync::Condvar::new();
    let answers = std::sync::Mutex::new(vec![String::new(); TURNS]);
    std::thread::scope(|s| {
        for t in 0..THREADS {
            let (ours, ops, turn, passed, answers) = (&ours, &ops, &turn, &passed, &answers);
            s.spawn(move || {
                for i in (t..TURNS).step_by(THREADS) {
                    let mut now = turn.lock().unwrap();
                    while *now != i {
                        now = passed.wait(now).unwrap();
                    }
                    let answer = ops[i].apply(ours);
                    answers.lock().unwrap()[i] = answer;
                    *now += 1;
                    passed.notify_all();
                }
            });
        }
    });
    let theirs: InternedStringDb<RwLockStrategy> = InternedStringDb::with_config(config);
    let expected: Vec<String> = ops.iter().map(|op| op.apply(&theirs)).collect();
    let answers = answers.into_inner().unwrap();
    for (i, (a, b)) in answers.iter().zip(&expected).enumerate() {
        assert_eq!(a, b, "{}: call {i}, {:?}", S::NAME, ops[i]);
    }
    let (a, b) = (ours.snapshot(), theirs.snapshot());
    assert!(a.iter().eq(b.iter()), "{}: the entries", S::NAME);
    assert!(!b.conflicts().is_empty(), "the names collide");
    assert_eq!(a.conflicts(), b.conflicts(), "{}", S::NAME);
    assert_eq!(ours.conflicts(), theirs.conflicts(), "{}", S::NAME);
    assert_same_drops::<S>(ours.conflicts_dropped(), theirs.conflicts_dropped());
    assert_eq!(ours.nc_len(0), theirs.nc_len(0), "{}", S::NAME);
    assert_eq!(ours.nc_bytes(0), theirs.nc_bytes(0), "{}", S::NAME);
}

/// A call of the test above, and its answer as text (every answer type
/// compares as its `Debug` form).
#[derive(Debug)]
enum TurnOp {
    Intern(String),
    Outcome(String),
    Register(u64, Vec<u8>),
    Batch(Vec<String>),
}

impl TurnOp {
    fn apply<S: Strategy>(&self, db: &InternedStringDb<S>) -> String {
        match self {
            TurnOp::Intern(s) => format!("{:?}", db.intern(0, s)),
            TurnOp::Outcome(s) => format!("{:?}", db.intern_with_outcome(0, s.as_bytes())),
            TurnOp::Register(id, s) => format!("{:?}", db.register(0, *id, s)),
            TurnOp::Batch(names) => format!("{:?}", batch_answer(db, 0, names)),
        }
    }
}

for_each_strategy!(
    agrees_with_the_reference,
    threads_on_their_own_ncs_end_as_the_reference,
    threads_on_shared_names_end_as_the_reference,
    threads_taking_turns_in_one_nc_end_as_the_reference,
);
