//! NC handles, thread pinning and compile-time names.

use interned_string_db::{
    get_id, intern, static_id, Config, Error, InternedStringDb, StaticName, Strategy,
};

fn handle_interns_into_its_nc<S: Strategy>() {
    let db: InternedStringDb<S> = InternedStringDb::with_config(Config::new().ncs(4));
    let h = db.handle(2).unwrap();
    assert_eq!(h.nc(), 2);
    assert_eq!(h.cpu(), None);
    let id = h.intern("x").unwrap();
    assert_eq!(db.lookup(2, "x"), Some(id));
    assert_eq!(h.lookup("x"), Some(id));
    assert_eq!(db.nc_len(2), 1);
    assert_eq!(h.intern(""), Err(Error::EmptyString));
    assert_eq!(
        db.handle(4).err(),
        Some(Error::NcOutOfRange { nc: 4, ncs: 4 })
    );
}

/// The documented mapping: thread i → NC i % ncs; threads of one NC share a
/// CPU. Pinning may fail in a restricted container: the handle still works.
#[cfg(feature = "pinning")]
fn pinned_threads_follow_the_mapping<S: Strategy>() {
    let db: InternedStringDb<S> = InternedStringDb::with_config(Config::new().ncs(3));
    let cpus = core_affinity::get_core_ids().map_or(0, |c| c.len());
    let pinned: Vec<(usize, Option<usize>)> = std::thread::scope(|s| {
        (0..6)
            .map(|i| {
                let db = &db;
                s.spawn(move || {
                    let h = db.pin_current_thread(i);
                    h.intern(&crate::common::name(i, 0)).unwrap();
                    (h.nc(), h.cpu())
                })
            })
            .collect::<Vec<_>>()
            .into_iter()
            .map(|t| t.join().unwrap())
            .collect()
    });
    for (i, &(nc, cpu)) in pinned.iter().enumerate() {
        assert_eq!(nc, i % 3);
        if let (Some(cpu), Some(ids)) = (cpu, core_affinity::get_core_ids()) {
            assert_eq!(cpu, ids[nc % cpus].id, "thread {i}");
        }
    }
    assert_eq!(db.nc_len(0) + db.nc_len(1) + db.nc_len(2), 6);
}

for_each_strategy!(
    handle_interns_into_its_nc,
    #[cfg(feature = "pinning")]
    pinned_threads_follow_the_mapping,
);

#[test]
fn static_names_register_once_per_nc() {
    static SPAN: StaticName = StaticName::new("handles test/span");
    const ID: u64 = static_id!("handles test/span");
    assert_eq!(SPAN.id(), ID);
    assert_eq!(ID, get_id(b"handles test/span"));
    assert_eq!(interned_string_db::global().lookup(9, SPAN.name()), None);
    for _ in 0..3 {
        assert_eq!(SPAN.intern(9), Ok(ID));
    }
    assert_eq!(
        interned_string_db::global().lookup(9, SPAN.name()),
        Some(ID)
    );
    assert_eq!(interned_string_db::global().lookup(10, SPAN.name()), None);
    assert_eq!(
        SPAN.intern(256),
        Err(Error::NcOutOfRange { nc: 256, ncs: 256 })
    );

    let other: InternedStringDb = InternedStringDb::with_config(Config::new().ncs(1));
    assert_eq!(SPAN.intern_in(&other, 0), Ok(ID));
    assert_eq!(other.lookup(0, "handles test/span"), Some(ID));
}

#[test]
fn intern_macro_per_call_site() {
    let ids: Vec<u64> = (0..4)
        .map(|nc| intern!(nc, "handles test/macro").unwrap())
        .collect();
    assert!(ids.iter().all(|&id| id == get_id(b"handles test/macro")));
    for nc in 0..4 {
        assert!(interned_string_db::global()
            .lookup(nc, "handles test/macro")
            .is_some());
    }
}

/// A closed NC refuses strings even when already present (docs/design.md),
/// also through the cached "registered" bit of a `StaticName` and `intern!`.
#[test]
fn static_names_refuse_a_closed_nc() {
    static SPAN: StaticName = StaticName::new("handles test/closed");
    fn macro_site() -> Result<u64, Error> {
        intern!(11, "handles test/closed macro")
    }
    let global = interned_string_db::global();
    assert_eq!(SPAN.intern(11), Ok(SPAN.id()));
    assert!(macro_site().is_ok());
    global.close_nc(11).unwrap();
    let closed = Err(Error::NcClosed { nc: 11 });
    assert_eq!(SPAN.intern(11), closed);
    assert_eq!(macro_site(), closed);
    global.open_nc(11).unwrap();
    assert_eq!(SPAN.intern(11), Ok(SPAN.id()));
    assert_eq!(macro_site(), Ok(get_id(b"handles test/closed macro")));
}
