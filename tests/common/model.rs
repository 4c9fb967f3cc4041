//! A simple model of the db (a `BTreeMap` per NC), and a checker that runs
//! an operation sequence on a real db and on the model and compares every
//! answer. Shared by the property test (tests/model.rs) and the fuzz target
//! (fuzz/fuzz_targets/ops_model.rs).

use std::collections::{BTreeMap, BTreeSet};

use interned_string_db::{Config, Error, InternedStringDb, Registered, Strategy};

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
    /// kept, every other string seen for an id reported once.
    fn snapshot(&self) -> (Vec<(u64, Vec<u8>)>, BTreeSet<Triple>) {
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
        let conflicts = seen
            .into_iter()
            .filter_map(|(id, s)| {
                let kept = merged.get(&id)?;
                (*kept != s).then(|| (id, kept.clone(), s))
            })
            .collect();
        (merged.into_iter().collect(), conflicts)
    }
}

/// Runs `ops` on a db of strategy `S` (`ncs` NCs, ids narrowed by `mask`)
/// and on the model; the first disagreement is the error.
pub(crate) fn check<S: Strategy>(ncs: usize, mask: u64, ops: &[Op]) -> Result<(), String> {
    // The model stores every conflict; so must the db (no budget).
    let db: InternedStringDb<S> = InternedStringDb::with_config(
        Config::new()
            .ncs(ncs)
            .conflict_budget(usize::MAX)
            .narrow_id_mask_for_tests(mask),
    );
    let mut model = Model {
        ncs,
        mask,
        shards: vec![BTreeMap::new(); ncs],
        open: vec![true; ncs],
        conflicts: vec![BTreeMap::new(); ncs],
    };
    for (step, op) in ops.iter().enumerate() {
        let fail = |what: String| Err(format!("{}: step {step}, {op:?}: {what}", S::NAME));
        match op {
            Op::Intern { nc, s } => {
                let got = db.intern_with_outcome(*nc, s);
                let id = model.id_of(s);
                let want = model.store(*nc, id, s).map(|o| (id, o));
                if got != want {
                    return fail(format!("db {got:?}, model {want:?}"));
                }
            }
            Op::Register { nc, id, s } => {
                let (got, want) = (db.register(*nc, *id, s), model.store(*nc, *id, s));
                if got != want {
                    return fail(format!("db {got:?}, model {want:?}"));
                }
            }
            Op::Lookup { nc, s } => {
                let id = model.id_of(s);
                let want = model
                    .shards
                    .get(*nc)
                    .and_then(|shard| shard.get(&id))
                    .filter(|kept| *kept == s)
                    .map(|_| id);
                let got = db.lookup_bytes(*nc, s);
                if got != want {
                    return fail(format!("db {got:?}, model {want:?}"));
                }
            }
            Op::Resolve { nc, id } => {
                let got = db.resolve(*nc, *id).map(|b| b.to_vec());
                let want = model
                    .shards
                    .get(*nc)
                    .and_then(|shard| shard.get(id))
                    .cloned();
                if got != want {
                    return fail(format!("db {got:?}, model {want:?}"));
                }
            }
            Op::Close(nc) | Op::Open(nc) => {
                let open = matches!(op, Op::Open(_));
                let got = if open {
                    db.open_nc(*nc)
                } else {
                    db.close_nc(*nc)
                };
                let want = if *nc < ncs {
                    model.open[*nc] = open;
                    Ok(())
                } else {
                    Err(Error::NcOutOfRange { nc: *nc, ncs })
                };
                if got != want {
                    return fail(format!("db {got:?}, model {want:?}"));
                }
            }
            Op::Snapshot => {
                let snapshot = db.snapshot();
                let got: Vec<(u64, Vec<u8>)> =
                    snapshot.iter().map(|(id, s)| (id, s.to_vec())).collect();
                let got_conflicts: BTreeSet<Triple> = snapshot
                    .conflicts()
                    .iter()
                    .map(|c| (c.id, c.kept.to_vec(), c.rejected.to_vec()))
                    .collect();
                let (want, want_conflicts) = model.snapshot();
                if got != want || got_conflicts != want_conflicts {
                    return fail(format!(
                        "db {got:?} {got_conflicts:?}, model {want:?} {want_conflicts:?}"
                    ));
                }
            }
        }
    }
    let entries: usize = model.shards.iter().map(BTreeMap::len).sum();
    let conflicts: usize = model.conflicts.iter().map(BTreeMap::len).sum();
    if db.total_entries() != entries || db.conflict_count() != conflicts {
        return Err(format!(
            "{}: totals: db {} entries, {} conflicts; model {entries}, {conflicts}",
            S::NAME,
            db.total_entries(),
            db.conflict_count()
        ));
    }
    Ok(())
}
