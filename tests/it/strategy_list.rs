//! The consumers of the crate's one list of strategies
//! (`interned_string_db::for_each_strategy`) cover all of it: the fuzz
//! crate and the loom models turn every strategy on; every module of
//! `src/raw/` is a strategy's `RAW_MODULE`, so that ThreadSanitizer and the
//! loom mutants, which take the strategies that have one, reach all of our
//! unsafe code, and `loom-tests/mutants.sh` has sites and models for each;
//! and no CI script or fuzz target names strategies of its own: they read
//! the list (`examples/strategies.rs`). `.ci/fuzz.sh` also compares the
//! names the built `ops_model` target runs with the list's.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use interned_string_db::{for_each_strategy, Strategy, StrategyVisitor};

/// A strategy of the list, as the checks see it.
struct Listed {
    name: &'static str,
    /// The marker type's name, without its path (`DashMapStrategy`).
    type_name: &'static str,
    raw_module: Option<&'static str>,
}

/// The list, every strategy on (the tests see the features of the crate's
/// dev-dependency on itself: `all-strategies`).
fn list() -> Vec<Listed> {
    struct Collect(Vec<Listed>);
    impl StrategyVisitor for Collect {
        fn visit<S: Strategy>(&mut self) {
            let path = std::any::type_name::<S>();
            self.0.push(Listed {
                name: S::NAME,
                type_name: path.rsplit("::").next().unwrap_or(path),
                raw_module: S::RAW_MODULE,
            });
        }
    }
    let mut collect = Collect(Vec::new());
    for_each_strategy(&mut collect);
    collect.0
}

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn read(path: &str) -> String {
    std::fs::read_to_string(root().join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The names inside the brackets of `key = [...]` on `line`, if it has one.
fn bracketed(line: &str, key: &str) -> Option<BTreeSet<String>> {
    let (_, rest) = line.split_once(&format!("{key} = ["))?;
    let (inside, _) = rest.split_once(']')?;
    Some(
        inside
            .split(',')
            .map(|item| item.trim().trim_matches('"').to_owned())
            .filter(|item| !item.is_empty())
            .collect(),
    )
}

/// The features of this crate that the feature `all-strategies` turns on,
/// one per optional strategy.
fn optional_strategy_features() -> BTreeSet<String> {
    read("Cargo.toml")
        .lines()
        .find(|line| line.starts_with("all-strategies ="))
        .and_then(|line| bracketed(line, "all-strategies"))
        .expect("Cargo.toml defines all-strategies = [...]")
}

/// How many of the list's strategies a crate whose manifest is `manifest`
/// builds: its dependency on this crate turns on `all-strategies`, or each
/// optional strategy's feature, or it misses some.
fn reached_by(manifest: &str, listed: usize) -> (usize, BTreeSet<String>) {
    let text = read(manifest);
    let line = text
        .lines()
        .find(|line| line.starts_with("interned-string-db = "))
        .unwrap_or_else(|| panic!("{manifest} has no dependency on interned-string-db"));
    let on = bracketed(line, "features").unwrap_or_default();
    let optional = optional_strategy_features();
    let missing: BTreeSet<String> = if on.contains("all-strategies") {
        BTreeSet::new()
    } else {
        optional.difference(&on).cloned().collect()
    };
    // Each optional feature adds one strategy (the README's feature table).
    (listed - missing.len(), missing)
}

#[test]
fn the_fuzz_crate_and_the_loom_models_build_every_strategy() {
    let listed = list().len();
    assert_eq!(
        optional_strategy_features().len() + 2,
        listed,
        "every strategy but the two always built has its feature in all-strategies"
    );
    for manifest in ["fuzz/Cargo.toml", "loom-tests/Cargo.toml"] {
        let (reached, missing) = reached_by(manifest, listed);
        assert_eq!(
            reached, listed,
            "{manifest} builds {reached} of the list's {listed} strategies: it leaves out \
             the features {missing:?} (turn on all-strategies)"
        );
    }
}

#[test]
fn every_module_of_src_raw_is_a_strategys_and_has_mutants() {
    let modules: BTreeSet<&str> = list().iter().filter_map(|s| s.raw_module).collect();
    let dirs: BTreeSet<String> = std::fs::read_dir(root().join("src/raw"))
        .unwrap()
        .map(|entry| entry.unwrap())
        .filter(|entry| entry.file_type().unwrap().is_dir())
        .map(|entry| entry.file_name().into_string().unwrap())
        .collect();
    let dirs: BTreeSet<&str> = dirs.iter().map(String::as_str).collect();
    assert_eq!(
        modules, dirs,
        "the strategies' RAW_MODULEs (left) are the modules of src/raw/ (right): \
         TSan and the loom mutants run on the strategies that have one"
    );
    let mutants = read("loom-tests/mutants.sh");
    for module in modules {
        assert!(
            mutants.contains(&format!("    {module}) sites=")),
            "loom-tests/mutants.sh has no sites and models for src/raw/{module}"
        );
    }
}

/// Every file of `src/raw/` with a memory-ordering site (a test file
/// aside) is one that `loom-tests/mutants.sh` weakens: a file split off
/// into a new directory must join a module's `sites` there, or its
/// orderings would go unchecked.
#[test]
fn every_ordering_site_of_src_raw_is_a_mutants_site() {
    let mutants = read("loom-tests/mutants.sh");
    let patterns: Vec<&str> = mutants
        .lines()
        .filter_map(|line| {
            line.split_once(" sites='")?
                .1
                .split_once('\'')
                .map(|(s, _)| s)
        })
        .flat_map(str::split_whitespace)
        .collect();
    assert!(
        !patterns.is_empty(),
        "mutants.sh names its sites as sites='...'"
    );
    let covered = |path: &str| {
        patterns
            .iter()
            .any(|pattern| match pattern.strip_suffix("*.rs") {
                Some(dir) => path
                    .strip_prefix(dir)
                    .is_some_and(|name| !name.contains('/')),
                None => *pattern == path,
            })
    };
    let mut dirs = vec!["src/raw".to_string()];
    let mut uncovered = Vec::new();
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(root().join(&dir)).unwrap() {
            let entry = entry.unwrap();
            let name = entry.file_name().into_string().unwrap();
            let path = format!("{dir}/{name}");
            if entry.file_type().unwrap().is_dir() {
                dirs.push(path);
                continue;
            }
            let ordered = ["Release", "Acquire", "AcqRel", "SeqCst"]
                .iter()
                .any(|ordering| read(&path).contains(&format!("Ordering::{ordering}")));
            // Unit tests (`tests.rs`, and the files of a `tests/` module)
            // order their own threads, not the library's.
            let test = name == "tests.rs" || dir.ends_with("/tests");
            if name.ends_with(".rs") && !test && ordered && !covered(&path) {
                uncovered.push(path);
            }
        }
    }
    assert!(
        uncovered.is_empty(),
        "files of src/raw/ with ordering sites that loom-tests/mutants.sh never weakens: {uncovered:?}"
    );
}

/// The files of `dir` (relative to the repository) whose names end with
/// one of `extensions`.
fn files(dir: &str, extensions: &[&str]) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(root().join(dir))
        .unwrap_or_else(|e| panic!("{dir}: {e}"))
        .map(|entry| entry.unwrap().path())
        .filter(|path| {
            let name = path.file_name().unwrap().to_string_lossy();
            path.is_file() && extensions.iter().any(|ext| name.ends_with(ext))
        })
        .collect();
    found.sort();
    found
}

/// Whether `word` stands in `line` on its own (not inside a longer name).
fn has_word(line: &str, word: &str) -> bool {
    let is_name = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-';
    line.match_indices(word).any(|(at, _)| {
        !line[..at].ends_with(is_name) && !line[at + word.len()..].starts_with(is_name)
    })
}

#[test]
fn no_script_or_fuzz_target_names_strategies_of_its_own() {
    let list = list();
    let mut typed = Vec::new();
    let mut scan = |path: &Path, comment: &str| {
        let text = std::fs::read_to_string(path).unwrap();
        for (number, line) in text.lines().enumerate() {
            if line.trim_start().starts_with(comment) {
                continue;
            }
            for strategy in &list {
                for word in [strategy.name, strategy.type_name] {
                    if has_word(line, word) {
                        typed.push(format!("{}:{}: {word}", path.display(), number + 1));
                    }
                }
            }
        }
    };
    // mutants.sh maps modules of src/raw/ (`optimistic`, `lock_free`) to
    // their sites: module names, not strategies.
    let scripts = [".ci", "loom-tests", "fuzz", "tests/c"]
        .iter()
        .flat_map(|dir| files(dir, &[".sh", "run"]))
        .filter(|path| !path.ends_with("loom-tests/mutants.sh"));
    for script in scripts {
        scan(&script, "#");
    }
    for target in files("fuzz/fuzz_targets", &[".rs"]) {
        scan(&target, "//");
    }
    assert!(
        typed.is_empty(),
        "strategies typed by hand, not read from the list \
         (`cargo run --example strategies`, `for_each_strategy`):\n{}",
        typed.join("\n")
    );
}
