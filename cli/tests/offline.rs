//! The offline analysis of `docs/offline-analysis.md`, run for real in each
//! engine the doc shows: three hosts save snapshot files, `stringdb export`
//! turns each into a Parquet dictionary, and a Python script per engine
//! (DuckDB, Spark; `.ci/offline.sh` installs both from PyPI) writes trace
//! events whose ids it computes itself, runs the doc's SQL for that engine
//! as the doc has it, and prints what the join resolved and which conflicts
//! it found. Both engines get the same fleet, and must print the same.
//!
//! `#[ignore]`d: they need `python3` with `duckdb`, and `pyspark` with a
//! Java runtime. Run them with
//! `cargo test -p stringdb-cli --test offline -- --ignored` (or add
//! `duckdb` or `spark` to run one).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use interned_string_db::{get_id, Config, InternedStringDb};

const HOSTS: usize = 3;
const NAMES_PER_HOST: usize = 2_000;
/// The name whose id one host registers for another name.
const CONTESTED: &str = "the contested name";
const IMPOSTOR: &str = "an impostor";
/// A caller-supplied id of 2^63 or more: an engine without unsigned
/// integers (Spark) holds it as a negative BIGINT.
const HIGH_ID: u64 = u64::MAX - 41;
const HIGH_ID_NAME: &str = "a caller's own id above 2^63";

fn name(host: usize, i: usize) -> String {
    format!("host_{host}/model_{}/layer_{}/tensor_{i}", i % 3, i % 50)
}

/// The fleet the doc describes, laid out as its SQL expects (paths relative
/// to `dir`): a Parquet dictionary per host in `dict/host*.parquet`, and the
/// trace's events, one a line in `event-names.txt`: a name whose id the
/// script computes, or `name<TAB>id` for a caller-supplied id.
struct Fleet {
    dir: PathBuf,
    events: usize,
}

impl Fleet {
    /// Hosts 0 to 2 intern their own names and a set shared by all; host 1
    /// registers a caller-supplied id above 2^63; host 2 registers, for an
    /// impostor, the id that the other hosts' contested name hashes to: the
    /// one cross-host conflict.
    fn build(dir: &Path) -> Fleet {
        let _ = std::fs::remove_dir_all(dir);
        std::fs::create_dir_all(dir.join("dict")).unwrap();
        let mut events = String::new();
        for host in 0..HOSTS {
            let db: InternedStringDb = InternedStringDb::with_config(Config::new().ncs(4));
            for i in 0..NAMES_PER_HOST {
                let own = name(host, i);
                db.intern(i % 4, &own).unwrap();
                db.intern(i % 4, &name(9, i)).unwrap(); // on every host
                if i % 7 == 0 {
                    writeln!(events, "{own}").unwrap();
                }
            }
            match host {
                2 => {
                    db.register(0, get_id(CONTESTED.as_bytes()), IMPOSTOR.as_bytes())
                        .unwrap();
                }
                _ => {
                    db.intern(1, CONTESTED).unwrap();
                }
            }
            if host == 1 {
                db.register(3, HIGH_ID, HIGH_ID_NAME.as_bytes()).unwrap();
            }
            let snapshot = dir.join(format!("host{host}.isdb"));
            db.snapshot().save(&snapshot).unwrap();
            let status = Command::new(env!("CARGO_BIN_EXE_stringdb"))
                .arg("export")
                .arg("-o")
                .arg(dir.join(format!("dict/host{host}.parquet")))
                .arg(&snapshot)
                .status()
                .unwrap();
            assert!(status.success());
        }
        for i in (0..NAMES_PER_HOST).step_by(13) {
            writeln!(events, "{}", name(9, i)).unwrap();
        }
        writeln!(events, "{HIGH_ID_NAME}\t{HIGH_ID}").unwrap();
        std::fs::write(dir.join("event-names.txt"), &events).unwrap();
        Fleet {
            dir: dir.to_owned(),
            events: events.lines().count(),
        }
    }
}

/// Builds the fleet in its own folder, runs `tests/offline/<script>` there
/// on it and the doc, and checks what it printed: every event joined to its
/// own name (the planted conflict's id joins to two names, so no event
/// names it), and exactly the planted conflict.
fn check_engine(script: &str) {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(script.replace('.', "-"));
    let fleet = Fleet::build(&dir);
    let python = std::env::var("PYTHON").unwrap_or_else(|_| "python3".into());
    let tests = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let output = Command::new(python)
        .arg("-B") // no __pycache__ in the source tree
        .arg(tests.join("offline").join(script))
        .arg(tests.join("../../docs/offline-analysis.md"))
        .arg("event-names.txt")
        .current_dir(&fleet.dir)
        .output()
        .expect("python3 runs");
    let stdout = String::from_utf8(output.stdout).unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stdout}{stderr}");
    assert_eq!(
        stdout,
        format!(
            "joined {}\nconflict {} {IMPOSTOR} | {CONTESTED}\n",
            fleet.events,
            get_id(CONTESTED.as_bytes())
        ),
        "{stderr}"
    );
}

#[test]
#[ignore = "needs python3 with duckdb (pip install duckdb)"]
fn duckdb_joins_events_to_dictionaries_from_many_hosts() {
    check_engine("duckdb_join.py");
}

#[test]
#[ignore = "needs python3 with pyspark (pip install pyspark) and a Java runtime"]
fn spark_joins_events_to_dictionaries_from_many_hosts() {
    check_engine("spark_join.py");
}
