//! What is measured: each strategy of ours and each peer, behind one trait,
//! shared by the contention harness and the criterion benches.
//!
//! Peers are one table each (they have no notion of NC, so they ignore it),
//! keyed by our deterministic id where they store by key, as a user emitting
//! trace tokens would. `lasso` and `ustr` return their own keys, not our ids.

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock, RwLock};

use interned_string_db::{contention, get_id, Config, DefaultStrategy, InternedStringDb, Strategy};

/// Something that interns (nc, string) → a key.
pub trait Subject: Sync {
    /// Interns `s` for NC `nc`; returns a key (our id, or the peer's own).
    fn intern(&self, nc: usize, s: &str) -> u64;
    /// Whether the harness should hand it names a batch at a time
    /// ([`intern_batch`](Self::intern_batch)) rather than one by one.
    fn batched(&self) -> bool {
        false
    }
    /// Interns every name of `names` for NC `nc`, writing the keys to `keys`.
    fn intern_batch(&self, nc: usize, names: &[&str], keys: &mut [u64]) {
        for (key, s) in keys.iter_mut().zip(names) {
            *key = self.intern(nc, s);
        }
    }
}

/// Calls back with each subject, statically dispatched.
pub trait Visitor {
    /// Called once per subject.
    fn visit<T: Subject>(&mut self, subject: &T);
}

/// Our db with strategy `S`.
#[derive(Debug)]
pub struct Db<S: Strategy>(pub InternedStringDb<S>);

impl<S: Strategy> Db<S> {
    /// A db of `ncs` NCs.
    pub fn new(ncs: usize) -> Self {
        Db(InternedStringDb::with_config(Config::new().ncs(ncs)))
    }
}

impl<S: Strategy> Subject for Db<S> {
    #[inline]
    fn intern(&self, nc: usize, s: &str) -> u64 {
        self.0.intern(nc, s).expect("intern")
    }
}

/// Our db with strategy `S`, fed a batch at a time through
/// [`InternedStringDb::intern_batch`].
#[derive(Debug)]
pub struct DbBatch<S: Strategy>(pub Db<S>);

impl<S: Strategy> Subject for DbBatch<S> {
    #[inline]
    fn intern(&self, nc: usize, s: &str) -> u64 {
        self.0.intern(nc, s)
    }
    fn batched(&self) -> bool {
        true
    }
    #[inline]
    fn intern_batch(&self, nc: usize, names: &[&str], keys: &mut [u64]) {
        self.0
             .0
            .intern_batch(nc, names, keys)
            .expect("intern_batch");
    }
}

/// The floor: `get_id` alone, storing nothing.
#[derive(Debug)]
pub struct GetIdOnly;

impl Subject for GetIdOnly {
    #[inline]
    fn intern(&self, _nc: usize, s: &str) -> u64 {
        get_id(s.as_bytes())
    }
}

/// `lasso::ThreadedRodeo`: a concurrent interner (returns its own keys).
#[derive(Debug)]
pub struct Lasso(pub lasso::ThreadedRodeo);

impl Subject for Lasso {
    #[inline]
    fn intern(&self, _nc: usize, s: &str) -> u64 {
        lasso::Key::into_usize(self.0.get_or_intern(s)) as u64
    }
}

/// `dashmap::DashMap<u64, Box<[u8]>>` keyed by our id; read first.
#[derive(Debug)]
pub struct DashMapPeer(pub dashmap::DashMap<u64, Box<[u8]>>);

impl Subject for DashMapPeer {
    #[inline]
    fn intern(&self, _nc: usize, s: &str) -> u64 {
        let id = get_id(s.as_bytes());
        if self.0.get(&id).is_none() {
            self.0.entry(id).or_insert_with(|| s.as_bytes().into());
        }
        id
    }
}

/// `RwLock<HashMap<u64, Box<[u8]>>>` keyed by our id, read lock first,
/// instrumented like our own locks (try first, time the blocking wait).
#[derive(Default, Debug)]
pub struct RwLockHashMap(pub RwLock<HashMap<u64, Box<[u8]>>>);

impl Subject for RwLockHashMap {
    #[inline]
    fn intern(&self, _nc: usize, s: &str) -> u64 {
        let id = get_id(s.as_bytes());
        let present = {
            let map = self
                .0
                .try_read()
                .or_else(|_| Ok::<_, ()>(contention::record_blocked(|| self.0.read().unwrap())))
                .unwrap();
            map.contains_key(&id)
        };
        if !present {
            let mut map = self
                .0
                .try_write()
                .or_else(|_| Ok::<_, ()>(contention::record_blocked(|| self.0.write().unwrap())))
                .unwrap();
            map.entry(id).or_insert_with(|| s.as_bytes().into());
        }
        id
    }
}

/// `Mutex<HashMap<u64, Box<[u8]>>>` keyed by our id, instrumented.
#[derive(Default, Debug)]
pub struct MutexHashMap(pub Mutex<HashMap<u64, Box<[u8]>>>);

impl Subject for MutexHashMap {
    #[inline]
    fn intern(&self, _nc: usize, s: &str) -> u64 {
        let id = get_id(s.as_bytes());
        let mut map = self
            .0
            .try_lock()
            .or_else(|_| Ok::<_, ()>(contention::record_blocked(|| self.0.lock().unwrap())))
            .unwrap();
        map.entry(id).or_insert_with(|| s.as_bytes().into());
        id
    }
}

/// `ustr`: a global, process-wide string cache (returns its own pointers;
/// it cannot be emptied, so it only grows across runs).
#[derive(Debug)]
pub struct UstrPeer;

impl Subject for UstrPeer {
    #[inline]
    fn intern(&self, _nc: usize, s: &str) -> u64 {
        ustr::ustr(s).as_char_ptr() as u64
    }
}

/// A subject, by name: what `--subjects` takes, with what the harness
/// needs to know about each.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SubjectName {
    /// `get_id` alone, storing nothing.
    Floor,
    /// One of our strategies, by its `Strategy::NAME`.
    Ours(&'static str),
    /// The default strategy fed a batch at a time (`intern_batch`).
    Batch,
    /// `lasso::ThreadedRodeo`.
    Lasso,
    /// `DashMap<u64, Box<[u8]>>` keyed by our id.
    DashMapPeer,
    /// `RwLock<HashMap<u64, Box<[u8]>>>`, read lock first.
    RwLockMap,
    /// `Mutex<HashMap<u64, Box<[u8]>>>`.
    MutexMap,
    /// `ustr`'s global cache.
    Ustr,
}

/// Our strategies, from the crate's one list.
macro_rules! our_strategies {
    ({} $($module:ident: $strategy:path,)*) => {
        /// Our strategies' names, in the crate's list order.
        const OURS: &[&str] = &[$(<$strategy as Strategy>::NAME),*];

        /// Visits a fresh db of `ncs` NCs with the strategy called `name`.
        fn visit_ours(name: &str, ncs: usize, visitor: &mut impl Visitor) {
            $(
                if name == <$strategy as Strategy>::NAME {
                    return visitor.visit(&Db::<$strategy>::new(ncs));
                }
            )*
            unreachable!("{name} is in OURS")
        }
    };
}

interned_string_db::__for_each_strategy!(our_strategies {});

impl SubjectName {
    /// Every subject, in report order: the floor, ours (the batch path
    /// beside the default strategy), the peers.
    pub fn all() -> &'static [SubjectName] {
        static ALL: OnceLock<Vec<SubjectName>> = OnceLock::new();
        ALL.get_or_init(|| {
            let mut all = vec![SubjectName::Floor];
            for &ours in OURS {
                all.push(SubjectName::Ours(ours));
                if ours == DefaultStrategy::NAME {
                    all.push(SubjectName::Batch);
                }
            }
            all.extend([
                SubjectName::Lasso,
                SubjectName::DashMapPeer,
                SubjectName::RwLockMap,
                SubjectName::MutexMap,
                SubjectName::Ustr,
            ]);
            all
        })
    }

    /// Its name in reports and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            SubjectName::Floor => "get_id (floor)",
            SubjectName::Ours(name) => name,
            SubjectName::Batch => "optimistic-batch",
            SubjectName::Lasso => "lasso::ThreadedRodeo",
            SubjectName::DashMapPeer => "DashMap<id>",
            SubjectName::RwLockMap => "RwLock<HashMap<id>>",
            SubjectName::MutexMap => "Mutex<HashMap<id>>",
            SubjectName::Ustr => "ustr",
        }
    }

    /// Whether it stores anything (the floor and ustr's global cache, which
    /// cannot be emptied, have no memory of their own to measure).
    pub fn stores(self) -> bool {
        !matches!(self, SubjectName::Floor | SubjectName::Ustr)
    }

    /// Whether it is left out of miss-heavy runs: quadratic to fill (a
    /// copy-on-write table copies itself on every insert), or cannot be
    /// emptied (ustr's global cache: its names are new only once).
    pub fn skips_misses(self) -> bool {
        matches!(self, SubjectName::Ours("arc-swap") | SubjectName::Ustr)
    }

    /// Whether it is quadratic to fill (copy-on-write: each insert copies
    /// the table), and so cannot be warmed with a vocabulary of `names`
    /// names in reasonable time: 10^5 names would take hours.
    pub fn skips_vocabulary(self, names: usize) -> bool {
        self == SubjectName::Ours("arc-swap") && names > 20_000
    }

    /// Whether it is measured in every placement: our strategies, which have
    /// a notion of NC. Peers have one table each. arc-swap is measured on one
    /// NC only: warming 256 NCs copy-on-write copies each NC's table per
    /// insert (quadratic per NC).
    pub fn every_placement(self) -> bool {
        match self {
            SubjectName::Batch => true,
            SubjectName::Ours(name) => name != "arc-swap",
            _ => false,
        }
    }

    /// Builds the subject (fresh and empty, except `ustr`, which is global)
    /// with `ncs` NCs, and visits it.
    pub fn visit(self, ncs: usize, visitor: &mut impl Visitor) {
        match self {
            SubjectName::Floor => visitor.visit(&GetIdOnly),
            SubjectName::Ours(name) => visit_ours(name, ncs, visitor),
            SubjectName::Batch => visitor.visit(&DbBatch(Db::<DefaultStrategy>::new(ncs))),
            SubjectName::Lasso => visitor.visit(&Lasso(lasso::ThreadedRodeo::new())),
            SubjectName::DashMapPeer => visitor.visit(&DashMapPeer(dashmap::DashMap::new())),
            SubjectName::RwLockMap => visitor.visit(&RwLockHashMap::default()),
            SubjectName::MutexMap => visitor.visit(&MutexHashMap::default()),
            SubjectName::Ustr => visitor.visit(&UstrPeer),
        }
    }
}

impl std::fmt::Display for SubjectName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad(self.name())
    }
}

impl clap::ValueEnum for SubjectName {
    fn value_variants<'a>() -> &'a [Self] {
        SubjectName::all()
    }

    fn to_possible_value(&self) -> Option<clap::builder::PossibleValue> {
        Some(clap::builder::PossibleValue::new(self.name()))
    }
}
