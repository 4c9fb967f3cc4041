//! Builds the static library, compiles the C test suite
//! (tests/c/test_c_api.c) and the C example against it, and runs them.
//! `.ci/run` runs them again under valgrind and AddressSanitizer
//! (tests/c/run.sh).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The static library is built here, by the same cargo, into a target
/// directory of its own (no contention with the outer build's lock):
/// `<target>/c-api/debug`.
fn static_library() -> &'static Path {
    static LIBRARY: OnceLock<PathBuf> = OnceLock::new();
    LIBRARY.get_or_init(|| {
        let exe = std::env::current_exe().expect("test executable path");
        // <target>/<profile>/deps/c_api-…
        let target = exe.ancestors().nth(3).expect("the target directory");
        let dir = target.join("c-api");
        let built = Command::new(env!("CARGO"))
            .args(["build", "--quiet", "--lib", "-p", "interned-string-db-capi"])
            .arg("--target-dir")
            .arg(&dir)
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .status()
            .expect("running cargo");
        assert!(built.success(), "building the static library failed");
        dir.join("debug/libinterned_string_db_capi.a")
    })
}

fn build_and_run(source: &str) -> String {
    // The C sources and the header are at the repository root.
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let library = static_library();
    let stem = Path::new(source).file_stem().unwrap().to_string_lossy();
    let binary = library.with_file_name(format!("c-{stem}"));
    let compiled = Command::new("gcc")
        .args(["-std=c11", "-O0", "-g", "-Wall", "-Wextra", "-Werror"])
        .arg("-I")
        .arg(root.join("include"))
        .arg(root.join(source))
        .arg(library)
        .args(["-lpthread", "-ldl", "-lm", "-o"])
        .arg(&binary)
        .status()
        .expect("running gcc");
    assert!(compiled.success(), "gcc failed on {source}");
    // The C tests write their files under `target/` of the directory they
    // run in (`tests/c/run.sh` runs them from the repository root): here a
    // directory of this build's own, wherever the target directory is.
    let cwd = library.with_file_name(format!("c-{stem}-cwd"));
    std::fs::create_dir_all(cwd.join("target")).expect("the C test's directory");
    let output = Command::new(&binary)
        .current_dir(&cwd)
        .output()
        .expect("running the C program");
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(
        output.status.success(),
        "{source} failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    stdout
}

#[test]
fn c_test_suite_passes() {
    let out = build_and_run("tests/c/test_c_api.c");
    assert!(out.trim_end().ends_with(" passed, 0 failed"), "{out}");
}

#[test]
fn c_batch_tests_pass() {
    let out = build_and_run("tests/c/test_batch.c");
    assert!(out.contains(" passed, 0 failed"), "{out}");
}

#[test]
fn c_example_runs() {
    let out = build_and_run("examples/c/example.c");
    assert!(out.contains("402710577667408\tmodel"), "{out}");
    assert!(out.contains("snapshot: 3 entries"), "{out}");
}
