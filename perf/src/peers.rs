//! The peers: the interners and concurrent maps a user would otherwise pick,
//! each behind [`Subject`].
//!
//! Peers are one table each (they have no notion of NC, so they ignore it).
//! Those that store by key are keyed by our deterministic id, as a user
//! emitting trace tokens would key them, and compare the stored bytes on a
//! hit, as our db does (an id another string already holds is a conflict:
//! like our db, they keep the first string, and count it in
//! [`CONFLICTS`]). `lasso`, `string_interner`, `symbol_table`, `internity`,
//! `paracord` and `ustr` return their own keys, not our ids.
//!
//! The peers whose locks we hold ourselves (`RwLock<StringInterner>`,
//! `RwLock<HashMap>`, `Mutex<HashMap>`) are instrumented like our own locks:
//! a try first, and only a failed try blocks, counted and timed by
//! [`contention::record_blocked`]. The others lock internally and report no
//! contention.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, RwLock, RwLockReadGuard, RwLockWriteGuard};

use interned_string_db::{contention, get_id};
use string_interner::Symbol as _;

use crate::subject::Subject;

/// Hits of the id-keyed peers whose stored bytes were not the name's (a
/// 50-bit id collision), over every peer and run of the process. It makes
/// the comparison on a hit observable, so that the compiler keeps it; it
/// stays 0 on the harness's vocabularies.
pub static CONFLICTS: AtomicU64 = AtomicU64::new(0);

/// Compares the bytes a peer holds for a name's id with the name's, as our
/// db does on a hit.
#[inline]
fn compare_stored(stored: &[u8], s: &str) {
    if stored != s.as_bytes() {
        conflict();
    }
}

#[cold]
#[inline(never)]
fn conflict() {
    CONFLICTS.fetch_add(1, Ordering::Relaxed);
}

/// A read lock: tried first; a failed try blocks, counted and timed.
fn read<T>(lock: &RwLock<T>) -> RwLockReadGuard<'_, T> {
    lock.try_read()
        .or_else(|_| Ok::<_, ()>(contention::record_blocked(|| lock.read().unwrap())))
        .unwrap()
}

/// A write lock: tried first; a failed try blocks, counted and timed.
fn write<T>(lock: &RwLock<T>) -> RwLockWriteGuard<'_, T> {
    lock.try_write()
        .or_else(|_| Ok::<_, ()>(contention::record_blocked(|| lock.write().unwrap())))
        .unwrap()
}

/// A mutex: tried first; a failed try blocks, counted and timed.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .try_lock()
        .or_else(|_| Ok::<_, ()>(contention::record_blocked(|| mutex.lock().unwrap())))
        .unwrap()
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

/// `RwLock<string_interner::DefaultStringInterner>`: a single-threaded
/// interner behind a lock, `get` under the read lock first, `get_or_intern`
/// under the write lock on a miss (returns its own symbols).
#[derive(Debug, Default)]
pub struct RwLockStringInterner(pub RwLock<string_interner::DefaultStringInterner>);

impl Subject for RwLockStringInterner {
    #[inline]
    fn intern(&self, _nc: usize, s: &str) -> u64 {
        let found = read(&self.0).get(s);
        let symbol = match found {
            Some(symbol) => symbol,
            None => write(&self.0).get_or_intern(s),
        };
        symbol.to_usize() as u64
    }
}

/// `symbol_table::SymbolTable`: its global-free table, 16 mutex shards
/// (returns its own symbols).
pub struct SymbolTable(pub symbol_table::SymbolTable);

impl std::fmt::Debug for SymbolTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SymbolTable")
    }
}

impl Subject for SymbolTable {
    #[inline]
    fn intern(&self, _nc: usize, s: &str) -> u64 {
        u64::from(std::num::NonZeroU32::from(self.0.intern(s)).get())
    }
}

/// `internity::ThreadedLexicon` (Microsoft, 2026): 64 shards by hash,
/// each a `parking_lot::RwLock` over a hashbrown table of `{hash, handle}`
/// with the strings in one buffer (returns its own 4-byte handles).
#[derive(Debug, Default)]
pub struct Internity(pub internity::ThreadedLexicon);

impl Subject for Internity {
    #[inline]
    fn intern(&self, _nc: usize, s: &str) -> u64 {
        u64::from(self.0.intern(s).as_u32())
    }
}

/// `paracord::ParaCord` (2025): a `clashmap` of string → key, strings in an
/// arena (returns its own keys).
#[derive(Debug, Default)]
pub struct Paracord(pub paracord::ParaCord);

impl Subject for Paracord {
    #[inline]
    fn intern(&self, _nc: usize, s: &str) -> u64 {
        u64::from(self.0.get_or_intern(s).into_repr())
    }
}

/// `ustr`: a global, process-wide string cache (returns its own pointers;
/// it cannot be emptied, so it only grows across runs).
#[derive(Debug)]
pub struct Ustr;

impl Subject for Ustr {
    #[inline]
    fn intern(&self, _nc: usize, s: &str) -> u64 {
        ustr::ustr(s).as_char_ptr() as u64
    }
}

/// `dashmap::DashMap<u64, Box<[u8]>>` keyed by our id; read first.
#[derive(Debug, Default)]
pub struct DashMapById(pub dashmap::DashMap<u64, Box<[u8]>>);

impl Subject for DashMapById {
    #[inline]
    fn intern(&self, _nc: usize, s: &str) -> u64 {
        let id = get_id(s.as_bytes());
        match self.0.get(&id) {
            Some(stored) => compare_stored(&stored, s),
            None => {
                self.0.entry(id).or_insert_with(|| s.as_bytes().into());
            }
        }
        id
    }
}

/// `scc::HashIndex<u64, Box<[u8]>>` keyed by our id: `peek_with` (no lock)
/// first, `insert_sync` on a miss.
#[derive(Debug, Default)]
pub struct SccHashIndexById(pub scc::HashIndex<u64, Box<[u8]>>);

impl Subject for SccHashIndexById {
    #[inline]
    fn intern(&self, _nc: usize, s: &str) -> u64 {
        let id = get_id(s.as_bytes());
        if self
            .0
            .peek_with(&id, |_, stored| compare_stored(stored, s))
            .is_none()
        {
            // An error is another thread's insert of the same id first: the
            // first bytes are kept.
            let _ = self.0.insert_sync(id, s.as_bytes().into());
        }
        id
    }
}

/// `papaya::HashMap<u64, Box<[u8]>>` keyed by our id, built with
/// `ResizeMode::Blocking` (its documented throughput setting): `pin`, then
/// `get`, `try_insert` on a miss.
#[derive(Debug)]
pub struct PapayaById(pub papaya::HashMap<u64, Box<[u8]>>);

impl Default for PapayaById {
    fn default() -> Self {
        PapayaById(
            papaya::HashMap::builder()
                .resize_mode(papaya::ResizeMode::Blocking)
                .build(),
        )
    }
}

impl Subject for PapayaById {
    #[inline]
    fn intern(&self, _nc: usize, s: &str) -> u64 {
        let id = get_id(s.as_bytes());
        let map = self.0.pin();
        match map.get(&id) {
            Some(stored) => compare_stored(stored, s),
            None => {
                // An error is another thread's insert of the same id first:
                // the first bytes are kept.
                let _ = map.try_insert(id, s.as_bytes().into());
            }
        }
        id
    }
}

/// `RwLock<HashMap<u64, Box<[u8]>>>` keyed by our id, read lock first.
#[derive(Debug, Default)]
pub struct RwLockHashMap(pub RwLock<HashMap<u64, Box<[u8]>>>);

impl Subject for RwLockHashMap {
    #[inline]
    fn intern(&self, _nc: usize, s: &str) -> u64 {
        let id = get_id(s.as_bytes());
        let present = read(&self.0)
            .get(&id)
            .map(|stored| compare_stored(stored, s))
            .is_some();
        if !present {
            write(&self.0)
                .entry(id)
                .or_insert_with(|| s.as_bytes().into());
        }
        id
    }
}

/// `Mutex<HashMap<u64, Box<[u8]>>>` keyed by our id.
#[derive(Debug, Default)]
pub struct MutexHashMap(pub Mutex<HashMap<u64, Box<[u8]>>>);

impl Subject for MutexHashMap {
    #[inline]
    fn intern(&self, _nc: usize, s: &str) -> u64 {
        let id = get_id(s.as_bytes());
        match lock(&self.0).entry(id) {
            std::collections::hash_map::Entry::Occupied(stored) => compare_stored(stored.get(), s),
            std::collections::hash_map::Entry::Vacant(slot) => {
                slot.insert(s.as_bytes().into());
            }
        }
        id
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every peer returns the same key for the same name, and different
    /// keys for different names; the id-keyed ones return our id.
    fn interns_consistently(subject: &impl Subject, keyed_by_id: bool) {
        let names: Vec<String> = (0..2_000).map(|i| format!("peer/name_{i}")).collect();
        let first: Vec<u64> = names.iter().map(|n| subject.intern(0, n)).collect();
        let again: Vec<u64> = names.iter().map(|n| subject.intern(0, n)).collect();
        assert_eq!(first, again);
        let mut distinct = first.clone();
        distinct.sort_unstable();
        distinct.dedup();
        assert_eq!(distinct.len(), names.len());
        if keyed_by_id {
            for (name, key) in names.iter().zip(&first) {
                assert_eq!(*key, get_id(name.as_bytes()));
            }
        }
    }

    #[test]
    fn peers_intern_consistently() {
        interns_consistently(&Lasso(lasso::ThreadedRodeo::new()), false);
        interns_consistently(&RwLockStringInterner::default(), false);
        interns_consistently(&SymbolTable(symbol_table::SymbolTable::new()), false);
        interns_consistently(&Ustr, false);
        interns_consistently(&DashMapById::default(), true);
        interns_consistently(&SccHashIndexById::default(), true);
        interns_consistently(&PapayaById::default(), true);
        interns_consistently(&RwLockHashMap::default(), true);
        interns_consistently(&MutexHashMap::default(), true);
    }

    /// A hit on an id whose stored bytes differ is a conflict: counted, and
    /// the id returned.
    #[test]
    fn id_keyed_peers_compare_the_stored_bytes() {
        let name = "peer/conflicting";
        let id = get_id(name.as_bytes());
        let other: Box<[u8]> = b"some other string".as_slice().into();
        let subjects: Vec<Box<dyn Fn() -> u64>> = vec![
            Box::new(|| {
                let m = DashMapById::default();
                m.0.insert(id, other.clone());
                m.intern(0, name)
            }),
            Box::new(|| {
                let m = SccHashIndexById::default();
                m.0.insert_sync(id, other.clone()).unwrap();
                m.intern(0, name)
            }),
            Box::new(|| {
                let m = PapayaById::default();
                m.0.pin().insert(id, other.clone());
                m.intern(0, name)
            }),
            Box::new(|| {
                let m = RwLockHashMap::default();
                m.0.write().unwrap().insert(id, other.clone());
                m.intern(0, name)
            }),
            Box::new(|| {
                let m = MutexHashMap::default();
                m.0.lock().unwrap().insert(id, other.clone());
                m.intern(0, name)
            }),
        ];
        for (i, intern) in subjects.iter().enumerate() {
            let before = CONFLICTS.load(Ordering::Relaxed);
            assert_eq!(intern(), id);
            assert!(
                CONFLICTS.load(Ordering::Relaxed) > before,
                "peer {i} did not compare the stored bytes"
            );
        }
    }
}
