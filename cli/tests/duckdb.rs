//! The offline analysis of `docs/offline-analysis.md`, run for real: three
//! hosts save snapshot files, `stringdb export` turns each into a Parquet
//! dictionary, and DuckDB (from PyPI; `.ci/run` installs it) joins trace
//! events, whose ids a Python SipHash computes independently, to the names,
//! and finds the cross-host conflict planted here.
//!
//! `#[ignore]`d: it needs `python3` with `duckdb`. Run it with
//! `cargo test -p stringdb-cli --test duckdb -- --ignored`.

use std::path::PathBuf;
use std::process::Command;

use interned_string_db::{get_id, Config, InternedStringDb};

fn name(host: usize, i: usize) -> String {
    format!("host_{host}/model_{}/layer_{}/tensor_{i}", i % 3, i % 50)
}

#[test]
#[ignore = "needs python3 with duckdb (pip install duckdb)"]
fn duckdb_joins_events_to_dictionaries_from_many_hosts() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("duckdb-join");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let mut events = String::new();
    for host in 0..3 {
        let db: InternedStringDb = InternedStringDb::with_config(Config::new().ncs(4));
        for i in 0..2_000 {
            let own = name(host, i);
            db.intern(i % 4, &own).unwrap();
            db.intern(i % 4, &name(9, i)).unwrap(); // on every host
            if i % 7 == 0 {
                events.push_str(&own);
                events.push('\n');
            }
        }
        if host == 2 {
            // A caller-supplied id that another host's name hashes to.
            db.register(0, get_id(b"the contested name"), b"an impostor")
                .unwrap();
        } else {
            db.intern(1, "the contested name").unwrap();
        }
        db.snapshot()
            .save(dir.join(format!("host{host}.isdb")))
            .unwrap();
        let status = Command::new(env!("CARGO_BIN_EXE_stringdb"))
            .arg("export")
            .arg("-o")
            .arg(dir.join(format!("host{host}.parquet")))
            .arg(dir.join(format!("host{host}.isdb")))
            .status()
            .unwrap();
        assert!(status.success());
    }
    for i in (0..2_000).step_by(13) {
        events.push_str(&name(9, i));
        events.push('\n');
    }
    let events_file = dir.join("events.txt");
    std::fs::write(&events_file, &events).unwrap();
    let python = std::env::var("PYTHON").unwrap_or_else(|_| "python3".into());
    let output = Command::new(python)
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/offline/duckdb_join.py"
        ))
        .arg(&events_file)
        .arg(dir.join("host*.parquet"))
        .output()
        .expect("python3 runs");
    let stdout = String::from_utf8(output.stdout).unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    // The planted conflict's id joins to two names, so the join check must
    // see no event for it: the events never name it.
    assert!(output.status.success(), "{stdout}{stderr}");
    let expected_events = events.lines().count();
    assert_eq!(
        stdout,
        format!(
            "joined {expected_events}\nconflict {} an impostor | the contested name\n",
            get_id(b"the contested name")
        )
    );
}
