//! What is measured: each strategy of ours and each peer, behind one trait,
//! shared by the contention harness and the criterion benches (which include
//! this file by path).
//!
//! Peers are one table each (they have no notion of NC, so they ignore it),
//! keyed by our deterministic id where they store by key, as a user emitting
//! trace tokens would. `lasso` and `ustr` return their own keys, not our ids.

use std::collections::HashMap;
use std::sync::{Mutex, RwLock};

use interned_string_db::{contention, get_id, Config, DefaultStrategy, InternedStringDb, Strategy};

/// Something that interns (nc, string) → a key.
pub trait Subject: Sync {
    /// Its name in reports.
    fn name(&self) -> String;
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
pub struct Db<S: Strategy>(pub InternedStringDb<S>);

impl<S: Strategy> Db<S> {
    /// A db of `ncs` NCs.
    pub fn new(ncs: usize) -> Self {
        Db(InternedStringDb::with_config(Config::new().ncs(ncs)))
    }
}

impl<S: Strategy> Subject for Db<S> {
    fn name(&self) -> String {
        self.0.strategy_name().to_string()
    }
    #[inline]
    fn intern(&self, nc: usize, s: &str) -> u64 {
        self.0.intern(nc, s).expect("intern")
    }
}

/// Our db with strategy `S`, fed a batch at a time through
/// [`InternedStringDb::intern_batch`].
pub struct DbBatch<S: Strategy>(pub Db<S>);

impl<S: Strategy> Subject for DbBatch<S> {
    fn name(&self) -> String {
        format!("{}-batch", self.0 .0.strategy_name())
    }
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
pub struct GetIdOnly;

impl Subject for GetIdOnly {
    fn name(&self) -> String {
        "get_id (floor)".into()
    }
    #[inline]
    fn intern(&self, _nc: usize, s: &str) -> u64 {
        get_id(s.as_bytes())
    }
}

/// `lasso::ThreadedRodeo`: a concurrent interner (returns its own keys).
pub struct Lasso(pub lasso::ThreadedRodeo);

impl Subject for Lasso {
    fn name(&self) -> String {
        "lasso::ThreadedRodeo".into()
    }
    #[inline]
    fn intern(&self, _nc: usize, s: &str) -> u64 {
        lasso::Key::into_usize(self.0.get_or_intern(s)) as u64
    }
}

/// `dashmap::DashMap<u64, Box<[u8]>>` keyed by our id; read first.
pub struct DashMapPeer(pub dashmap::DashMap<u64, Box<[u8]>>);

impl Subject for DashMapPeer {
    fn name(&self) -> String {
        "DashMap<id>".into()
    }
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
#[derive(Default)]
pub struct RwLockHashMap(pub RwLock<HashMap<u64, Box<[u8]>>>);

impl Subject for RwLockHashMap {
    fn name(&self) -> String {
        "RwLock<HashMap<id>>".into()
    }
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
#[derive(Default)]
pub struct MutexHashMap(pub Mutex<HashMap<u64, Box<[u8]>>>);

impl Subject for MutexHashMap {
    fn name(&self) -> String {
        "Mutex<HashMap<id>>".into()
    }
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
pub struct UstrPeer;

impl Subject for UstrPeer {
    fn name(&self) -> String {
        "ustr".into()
    }
    #[inline]
    fn intern(&self, _nc: usize, s: &str) -> u64 {
        ustr::ustr(s).as_char_ptr() as u64
    }
}

/// The floor's name.
pub const FLOOR: &str = "get_id (floor)";

/// The default strategy fed a batch at a time.
pub const BATCH: &str = "optimistic-batch";

/// The peers' names, in report order.
pub const PEERS: &[&str] = &[
    "lasso::ThreadedRodeo",
    "DashMap<id>",
    "RwLock<HashMap<id>>",
    "Mutex<HashMap<id>>",
    "ustr",
];

/// Our strategies, from the crate's one list.
macro_rules! our_strategies {
    ({} $($module:ident: $strategy:path,)*) => {
        /// Our strategies' names, in the crate's list order.
        pub const OURS: &[&str] = &[$(<$strategy as Strategy>::NAME),*];

        /// Visits a fresh db of `ncs` NCs with the strategy called `name`;
        /// false if no strategy has that name.
        fn visit_ours(name: &str, ncs: usize, visitor: &mut impl Visitor) -> bool {
            $(
                if name == <$strategy as Strategy>::NAME {
                    visitor.visit(&Db::<$strategy>::new(ncs));
                    return true;
                }
            )*
            false
        }
    };
}

interned_string_db::__for_each_strategy!(our_strategies {});

/// Every subject, by name, in report order: the floor, ours (the batch
/// path beside the default strategy), the peers.
pub fn all() -> Vec<&'static str> {
    let mut all = vec![FLOOR];
    for &ours in OURS {
        all.push(ours);
        if ours == DefaultStrategy::NAME {
            all.push(BATCH);
        }
    }
    all.extend_from_slice(PEERS);
    all
}

/// Whether a subject is quadratic to fill, and so left out of miss-heavy
/// runs (a copy-on-write table copies itself on every insert), or cannot be
/// emptied (ustr's global cache: its names are new only once).
pub fn skips_misses(name: &str) -> bool {
    matches!(name, "arc-swap" | "ustr")
}

/// Whether a subject is quadratic to fill (copy-on-write: each insert copies
/// the table), and so cannot be warmed with a vocabulary of `names` names in
/// reasonable time: 10^5 names would take hours.
pub fn skips_vocabulary(name: &str, names: usize) -> bool {
    name == "arc-swap" && names > 20_000
}

/// The subjects measured in every placement: our strategies with a notion of
/// NC. Peers have one table each. arc-swap is measured on one NC only: warming
/// 256 NCs copy-on-write copies each NC's table per insert (quadratic per NC).
pub fn every_placement(name: &str) -> bool {
    name == BATCH || (OURS.contains(&name) && name != "arc-swap")
}

/// Builds the subject called `name` (fresh and empty, except `ustr`, which
/// is global) with `ncs` NCs, and visits it. Returns false for an unknown
/// name.
pub fn with_subject(name: &str, ncs: usize, visitor: &mut impl Visitor) -> bool {
    match name {
        FLOOR => visitor.visit(&GetIdOnly),
        BATCH => visitor.visit(&DbBatch(Db::<DefaultStrategy>::new(ncs))),
        "lasso::ThreadedRodeo" => visitor.visit(&Lasso(lasso::ThreadedRodeo::new())),
        "DashMap<id>" => visitor.visit(&DashMapPeer(dashmap::DashMap::new())),
        "RwLock<HashMap<id>>" => visitor.visit(&RwLockHashMap::default()),
        "Mutex<HashMap<id>>" => visitor.visit(&MutexHashMap::default()),
        "ustr" => visitor.visit(&UstrPeer),
        ours => return visit_ours(ours, ncs, visitor),
    }
    true
}
