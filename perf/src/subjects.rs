//! What is measured: each strategy of ours and each peer (`crate::peers`),
//! behind one trait (`crate::subject`), shared by the contention harness
//! and the criterion benches.

use std::sync::OnceLock;

use interned_string_db::{
    for_each_strategy, get_id, Config, DefaultStrategy, InternedStringDb, Strategy, StrategyVisitor,
};

use crate::peers;
use crate::subject::{Subject, Visitor};

/// Whether our strategy called `strategy` (its `Strategy::NAME`) copies its
/// table on every insert, and so is quadratic to fill.
///
/// The one place the measuring crates ask: every special case of a
/// copy-on-write strategy (in the harness's plan, the criterion benches and
/// the memory bench) comes here, and the answer is the library's
/// `Strategy::COPY_ON_WRITE`.
pub fn copies_on_write(strategy: &str) -> bool {
    ours()
        .iter()
        .any(|ours| ours.name == strategy && ours.copies_on_write)
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
    fn settle(&self) {
        // Settles every NC (and finds their conflicts).
        let _ = self.0.conflict_count();
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
    /// `RwLock<string_interner::DefaultStringInterner>`, read lock first.
    RwLockStringInterner,
    /// `symbol_table::SymbolTable`, 16 mutex shards.
    SymbolTable,
    /// `internity::ThreadedLexicon`.
    Internity,
    /// `paracord::ParaCord`.
    Paracord,
    /// `ustr`'s global cache.
    Ustr,
    /// `DashMap<u64, Box<[u8]>>` keyed by our id.
    DashMapById,
    /// `scc::HashIndex<u64, Box<[u8]>>` keyed by our id.
    SccHashIndexById,
    /// `papaya::HashMap<u64, Box<[u8]>>` keyed by our id, blocking resizes.
    PapayaById,
    /// `RwLock<HashMap<u64, Box<[u8]>>>` keyed by our id, read lock first.
    RwLockMap,
    /// `Mutex<HashMap<u64, Box<[u8]>>>` keyed by our id.
    MutexMap,
}

/// One of our strategies, as the crate's one list names it.
#[derive(Debug, Clone, Copy)]
struct Ours {
    name: &'static str,
    copies_on_write: bool,
}

/// Our strategies, in the crate's list order.
fn ours() -> &'static [Ours] {
    struct List(Vec<Ours>);
    impl StrategyVisitor for List {
        fn visit<S: Strategy>(&mut self) {
            self.0.push(Ours {
                name: S::NAME,
                copies_on_write: S::COPY_ON_WRITE,
            });
        }
    }
    static OURS: OnceLock<Vec<Ours>> = OnceLock::new();
    OURS.get_or_init(|| {
        let mut list = List(Vec::new());
        for_each_strategy(&mut list);
        list.0
    })
}

/// Visits a fresh db of `ncs` NCs with the strategy called `name`.
fn visit_ours(name: &str, ncs: usize, visitor: &mut impl Visitor) {
    struct Find<'a, V> {
        name: &'a str,
        ncs: usize,
        visitor: &'a mut V,
        found: bool,
    }
    impl<V: Visitor> StrategyVisitor for Find<'_, V> {
        fn visit<S: Strategy>(&mut self) {
            if !self.found && self.name == S::NAME {
                self.found = true;
                self.visitor.visit(&Db::<S>::new(self.ncs));
            }
        }
    }
    let mut find = Find {
        name,
        ncs,
        visitor,
        found: false,
    };
    for_each_strategy(&mut find);
    assert!(find.found, "{name} is one of ours");
}

/// Vocabularies larger than this are not warmed into a copy-on-write
/// strategy: 10^5 names would take hours.
const COPY_ON_WRITE_MAX_NAMES: usize = 20_000;

impl SubjectName {
    /// Every subject, in report order: the floor, ours (the batch path
    /// beside the default strategy), the interners that return their own
    /// keys, the maps keyed by our id.
    pub fn all() -> &'static [SubjectName] {
        static ALL: OnceLock<Vec<SubjectName>> = OnceLock::new();
        ALL.get_or_init(|| {
            let mut all = vec![SubjectName::Floor];
            for ours in ours() {
                all.push(SubjectName::Ours(ours.name));
                if ours.name == DefaultStrategy::NAME {
                    all.push(SubjectName::Batch);
                }
            }
            all.extend([
                SubjectName::Lasso,
                SubjectName::RwLockStringInterner,
                SubjectName::SymbolTable,
                SubjectName::Internity,
                SubjectName::Paracord,
                SubjectName::Ustr,
                SubjectName::DashMapById,
                SubjectName::SccHashIndexById,
                SubjectName::PapayaById,
                SubjectName::RwLockMap,
                SubjectName::MutexMap,
            ]);
            all
        })
    }

    /// The subject called `name` in reports (as [`name`](Self::name)
    /// writes it), if there is one.
    pub fn from_name(name: &str) -> Option<SubjectName> {
        SubjectName::all()
            .iter()
            .copied()
            .find(|s| s.name() == name)
    }

    /// Its name in reports and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            SubjectName::Floor => "get_id (floor)",
            SubjectName::Ours(name) => name,
            SubjectName::Batch => "optimistic-batch",
            SubjectName::Lasso => "lasso::ThreadedRodeo",
            SubjectName::RwLockStringInterner => "RwLock<StringInterner>",
            SubjectName::SymbolTable => "symbol_table",
            SubjectName::Internity => "internity::ThreadedLexicon",
            SubjectName::Paracord => "paracord",
            SubjectName::Ustr => "ustr",
            SubjectName::DashMapById => "DashMap<id>",
            SubjectName::SccHashIndexById => "scc::HashIndex<id>",
            SubjectName::PapayaById => "papaya::HashMap<id>",
            SubjectName::RwLockMap => "RwLock<HashMap<id>>",
            SubjectName::MutexMap => "Mutex<HashMap<id>>",
        }
    }

    /// Whether it is ours: one of our strategies, or the default one's
    /// batch path.
    pub fn is_ours(self) -> bool {
        matches!(self, SubjectName::Ours(_) | SubjectName::Batch)
    }

    /// Whether it computes our 50-bit id of each name, as our db does:
    /// ours, the floor and the maps keyed by the id. The interners that
    /// return keys of their own do not, and are compared with the `get_id`
    /// floor added as well (the same work).
    pub fn computes_id(self) -> bool {
        !matches!(
            self,
            SubjectName::Lasso
                | SubjectName::RwLockStringInterner
                | SubjectName::SymbolTable
                | SubjectName::Internity
                | SubjectName::Paracord
                | SubjectName::Ustr
        )
    }

    /// Whether it is the default strategy, interning one name at a time.
    pub fn is_default(self) -> bool {
        self == SubjectName::Ours(DefaultStrategy::NAME)
    }

    /// Whether it stores anything (the floor and ustr's global cache, which
    /// cannot be emptied, have no memory of their own to measure).
    pub fn stores(self) -> bool {
        !matches!(self, SubjectName::Floor | SubjectName::Ustr)
    }

    /// Whether it copies its table on every insert, and so is quadratic to
    /// fill ([`copies_on_write`]).
    pub fn copies_on_write(self) -> bool {
        matches!(self, SubjectName::Ours(name) if copies_on_write(name))
    }

    /// Whether it is left out of miss-heavy runs: quadratic to fill
    /// (copy-on-write), or cannot be emptied (ustr's global cache: its names
    /// are new only once).
    pub fn skips_misses(self) -> bool {
        self.copies_on_write() || self == SubjectName::Ustr
    }

    /// Whether it cannot be warmed with a vocabulary of `names` names in
    /// reasonable time (copy-on-write, past 20,000 names).
    pub fn skips_vocabulary(self, names: usize) -> bool {
        self.copies_on_write() && names > COPY_ON_WRITE_MAX_NAMES
    }

    /// Whether it is measured in every placement: our strategies, which have
    /// a notion of NC. Peers have one table each. A copy-on-write strategy
    /// is measured on one NC only: warming 256 NCs copies each NC's table
    /// per insert (quadratic per NC).
    pub fn every_placement(self) -> bool {
        self.is_ours() && !self.copies_on_write()
    }

    /// Builds the subject (fresh and empty, except `ustr`, which is global)
    /// with `ncs` NCs, and visits it.
    pub fn visit(self, ncs: usize, visitor: &mut impl Visitor) {
        match self {
            SubjectName::Floor => visitor.visit(&GetIdOnly),
            SubjectName::Ours(name) => visit_ours(name, ncs, visitor),
            SubjectName::Batch => visitor.visit(&DbBatch(Db::<DefaultStrategy>::new(ncs))),
            SubjectName::Lasso => visitor.visit(&peers::Lasso(lasso::ThreadedRodeo::new())),
            SubjectName::RwLockStringInterner => {
                visitor.visit(&peers::RwLockStringInterner::default())
            }
            SubjectName::SymbolTable => {
                visitor.visit(&peers::SymbolTable(symbol_table::SymbolTable::new()))
            }
            SubjectName::Internity => visitor.visit(&peers::Internity::default()),
            SubjectName::Paracord => visitor.visit(&peers::Paracord::default()),
            SubjectName::Ustr => visitor.visit(&peers::Ustr),
            SubjectName::DashMapById => visitor.visit(&peers::DashMapById::default()),
            SubjectName::SccHashIndexById => visitor.visit(&peers::SccHashIndexById::default()),
            SubjectName::PapayaById => visitor.visit(&peers::PapayaById::default()),
            SubjectName::RwLockMap => visitor.visit(&peers::RwLockHashMap::default()),
            SubjectName::MutexMap => visitor.visit(&peers::MutexHashMap::default()),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_subject_is_found_by_its_name() {
        for &subject in SubjectName::all() {
            assert_eq!(SubjectName::from_name(subject.name()), Some(subject));
        }
        assert_eq!(SubjectName::from_name("no such subject"), None);
    }

    #[test]
    fn copy_on_write_strategies_skip_what_is_quadratic_to_fill() {
        let cow: Vec<SubjectName> = SubjectName::all()
            .iter()
            .copied()
            .filter(|s| s.copies_on_write())
            .collect();
        assert!(cow.iter().all(|s| s.is_ours()));
        for s in cow {
            assert!(s.skips_misses());
            assert!(!s.every_placement());
            assert!(s.skips_vocabulary(COPY_ON_WRITE_MAX_NAMES + 1));
            assert!(!s.skips_vocabulary(COPY_ON_WRITE_MAX_NAMES));
        }
        assert!(SubjectName::Ours(DefaultStrategy::NAME).every_placement());
        assert!(!SubjectName::Ours(DefaultStrategy::NAME).skips_misses());
    }
}
