//! A simple model of the db (a `BTreeMap` per NC), and a checker that runs
//! an operation sequence on a real db and on the model and compares every
//! answer. Shared by the property test (tests/it/model.rs) and the fuzz target
//! (fuzz/fuzz_targets/ops_model.rs).

use std::collections::{BTreeMap, BTreeSet};

use interned_string_db::{Config, Error, InternedStringDb, Registered, Snapshot, Strategy};

/// One operation.
#[derive(Debug, Clone)]
pub(crate) enum Op {
    Intern { nc: usize, s: Vec<u8> },
    Register { nc: usize, id: u64, s: Vec<u8> },
    Lookup { nc: usize, s: Vec<u8> },
    Resolve { nc: usize, id: u64 },
    Close(usize),
    Open(usize),
    Snapshot,
}

type Triple = (u64, Vec<u8>, Vec<u8>);

/// One NC's conflicts: (id, rejected) → kept.
type Conflicts = BTreeMap<(u64, Vec<u8>), Vec<u8>>;

struct Model {
    ncs: usize,
    mask: u64,
    shards: Vec<BTreeMap<u64, Vec<u8>>>,
    open: Vec<bool>,
    /// Per NC: (id, rejected) → kept, each distinct pair once.
    conflicts: Vec<Conflicts>,
}

impl Model {
    fn id_of(&self, s: &[u8]) -> u64 {
        ((interned_string_db::get_id(s) - 1) & self.mask) + 1
    }

    fn store(&mut self, nc: usize, id: u64, s: &[u8]) -> Result<Registered, Error> {
        if s.is_empty() {
            return Err(Error::EmptyString);
        }
        if nc >= self.ncs {
            return Err(Error::NcOutOfRange { nc, ncs: self.ncs });
        }
        if !self.open[nc] {
            return Err(Error::NcClosed { nc });
        }
        match self.shards[nc].get(&id) {
            None => {
                self.shards[nc].insert(id, s.to_vec());
                Ok(Registered::Inserted)
            }
            Some(kept) if kept == s => Ok(Registered::AlreadyPresent),
            Some(kept) => {
                let kept = kept.clone();
                self.conflicts[nc].entry((id, s.to_vec())).or_insert(kept);
                Ok(Registered::Conflict)
            }
        }
    }

    /// The snapshot as specified: open NCs in order, the lowest NC's string
    /// kept, every other string seen for an id reported once (in order).
    fn snapshot(&self) -> Expected {
        let mut merged: BTreeMap<u64, Vec<u8>> = BTreeMap::new();
        let mut seen: Vec<(u64, Vec<u8>)> = Vec::new();
        for nc in (0..self.ncs).filter(|&nc| self.open[nc]) {
            for (&id, s) in &self.shards[nc] {
                merged.entry(id).or_insert_with(|| s.clone());
                seen.push((id, s.clone()));
            }
            for ((id, rejected), kept) in &self.conflicts[nc] {
                seen.push((*id, kept.clone()));
                seen.push((*id, rejected.clone()));
            }
        }
        let conflicts: BTreeSet<Triple> = seen
            .into_iter()
            .filter_map(|(id, s)| {
                let kept = merged.get(&id)?;
                (*kept != s).then(|| (id, kept.clone(), s))
            })
            .collect();
        Expected {
            entries: merged.into_iter().collect(),
            conflicts: conflicts.into_iter().collect(),
        }
    }
}

/// The model's snapshot: entries in id order, conflicts sorted, each once.
#[derive(Debug)]
struct Expected {
    entries: Vec<(u64, Vec<u8>)>,
    conflicts: Vec<Triple>,
}

impl PartialEq<Snapshot> for Expected {
    /// Compared where they lie, so that a fuzz execution, which takes many
    /// snapshots of several dbs, copies none of them.
    fn eq(&self, snapshot: &Snapshot) -> bool {
        let entries = snapshot.iter();
        let conflicts = snapshot.conflicts();
        entries.len() == self.entries.len()
            && entries
                .zip(&self.entries)
                .all(|((id, s), (want_id, want))| id == *want_id && s == &want[..])
            && conflicts.len() == self.conflicts.len()
            && conflicts
                .iter()
                .zip(&self.conflicts)
                .all(|(c, (id, kept, rejected))| {
                    c.id == *id && *c.kept == kept[..] && *c.rejected == rejected[..]
                })
    }
}

/// One db under test, whatever its strategy: what `check_all` asks of it.
pub(crate) trait Subject {
    fn name(&self) -> &'static str;
    fn intern(&self, nc: usize, s: &[u8]) -> Result<(u64, Registered), Error>;
    fn register(&self, nc: usize, id: u64, s: &[u8]) -> Result<Registered, Error>;
    fn lookup(&self, nc: usize, s: &[u8]) -> Option<u64>;
    fn resolve(&self, nc: usize, id: u64) -> Option<Vec<u8>>;
    fn set_open(&self, nc: usize, open: bool) -> Result<(), Error>;
    fn snapshot(&self) -> Snapshot;
    /// (entries, conflicts) over every NC.
    fn totals(&self) -> (usize, usize);
}

impl<S: Strategy> Subject for InternedStringDb<S> {
    fn name(&self) -> &'static str {
        S::NAME
    }
    fn intern(&self, nc: usize, s: &[u8]) -> Result<(u64, Registered), Error> {
        self.intern_with_outcome(nc, s)
    }
    fn register(&self, nc: usize, id: u64, s: &[u8]) -> Result<Registered, Error> {
        InternedStringDb::register(self, nc, id, s)
    }
    fn lookup(&self, nc: usize, s: &[u8]) -> Option<u64> {
        self.lookup_bytes(nc, s)
    }
    fn resolve(&self, nc: usize, id: u64) -> Option<Vec<u8>> {
        InternedStringDb::resolve(self, nc, id).map(|b| b.to_vec())
    }
    fn set_open(&self, nc: usize, open: bool) -> Result<(), Error> {
        if open {
            self.open_nc(nc)
        } else {
            self.close_nc(nc)
        }
    }
    fn snapshot(&self) -> Snapshot {
        InternedStringDb::snapshot(self)
    }
    fn totals(&self) -> (usize, usize) {
        (self.total_entries(), self.conflict_count())
    }
}

/// A db of strategy `S` with `ncs` NCs and ids narrowed by `mask`, storing
/// every conflict (the model does: no budget).
pub(crate) fn subject<S: Strategy>(ncs: usize, mask: u64) -> Box<dyn Subject> {
    Box::new(InternedStringDb::<S>::with_config(
        Config::new()
            .ncs(ncs)
            .conflict_budget(usize::MAX)
            .narrow_id_mask_for_tests(mask),
    ))
}

/// A db of every strategy of the crate's one list
/// (`interned_string_db::for_each_strategy`), as [`subject`] makes them.
pub(crate) fn every_subject(ncs: usize, mask: u64) -> Vec<Box<dyn Subject>> {
    struct Make {
        ncs: usize,
        mask: u64,
        subjects: Vec<Box<dyn Subject>>,
    }
    impl interned_string_db::StrategyVisitor for Make {
        fn visit<S: Strategy>(&mut self) {
            self.subjects.push(subject::<S>(self.ncs, self.mask));
        }
    }
    let mut make = Make {
        ncs,
        mask,
        subjects: Vec::new(),
    };
    interned_string_db::for_each_strategy(&mut make);
    make.subjects
}

/// Runs `ops` on every db of `subjects` in lockstep and once on the model:
/// each answer of each db is compared with the model's, step by step; the
/// first disagreement is the error.
pub(crate) fn check_all(
    ncs: usize,
    mask: u64,
    subjects: &[Box<dyn Subject>],
    ops: &[Op],
) -> Result<(), String> {
    let mut model = Model {
        ncs,
        mask,
        shards: vec![BTreeMap::new(); ncs],
        open: vec![true; ncs],
        conflicts: vec![BTreeMap::new(); ncs],
    };
    for (step, op) in ops.iter().enumerate() {
        // Compares every db's answer with the model's.
        macro_rules! compare {
            ($want:expr, |$db:ident| $got:expr) => {{
                let want = $want;
                for $db in subjects {
                    let got = $got;
                    if want != got {
                        return Err(format!(
                            "{}: step {step}, {op:?}: db {got:?}, model {want:?}",
                            $db.name()
                        ));
                    }
                }
            }};
        }
        match op {
            Op::Intern { nc, s } => {
                let id = model.id_of(s);
                compare!(model.store(*nc, id, s).map(|o| (id, o)), |db| db
                    .intern(*nc, s));
            }
            Op::Register { nc, id, s } => {
                compare!(model.store(*nc, *id, s), |db| db.register(*nc, *id, s));
            }
            Op::Lookup { nc, s } => {
                let id = model.id_of(s);
                let want = model
                    .shards
                    .get(*nc)
                    .and_then(|shard| shard.get(&id))
                    .filter(|kept| *kept == s)
                    .map(|_| id);
                compare!(want, |db| db.lookup(*nc, s));
            }
            Op::Resolve { nc, id } => {
                let want = model
                    .shards
                    .get(*nc)
                    .and_then(|shard| shard.get(id))
                    .cloned();
                compare!(want, |db| db.resolve(*nc, *id));
            }
            Op::Close(nc) | Op::Open(nc) => {
                let open = matches!(op, Op::Open(_));
                let want = if *nc < ncs {
                    model.open[*nc] = open;
                    Ok(())
                } else {
                    Err(Error::NcOutOfRange { nc: *nc, ncs })
                };
                compare!(want, |db| db.set_open(*nc, open));
            }
            Op::Snapshot => compare!(model.snapshot(), |db| db.snapshot()),
        }
    }
    let entries: usize = model.shards.iter().map(BTreeMap::len).sum();
    let conflicts: usize = model.conflicts.iter().map(BTreeMap::len).sum();
    for db in subjects {
        let (got_entries, got_conflicts) = db.totals();
        if (got_entries, got_conflicts) != (entries, conflicts) {
            return Err(format!(
                "{}: totals: db {got_entries} entries, {got_conflicts} conflicts; model {entries}, {conflicts}",
                db.name()
            ));
        }
    }
    Ok(())
}
