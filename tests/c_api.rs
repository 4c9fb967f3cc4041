//! Compiles the C test suite (tests/c/test_c_api.c) and the C example against
//! the static library `cargo test` has just built, and runs them. `.ci/run`
//! runs them again under valgrind and AddressSanitizer (tests/c/run.sh).

use std::path::{Path, PathBuf};
use std::process::Command;

/// `target/<profile>`, where cargo put the library: two levels above this
/// test's executable (`target/<profile>/deps/c_api-…`).
fn profile_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("test executable path");
    exe.parent()
        .and_then(Path::parent)
        .expect("target/<profile>")
        .to_path_buf()
}

fn build_and_run(source: &str) -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = profile_dir();
    let library = dir.join("libinterned_string_db.a");
    assert!(library.exists(), "{} was not built", library.display());
    let binary = dir.join(format!(
        "c-{}",
        Path::new(source).file_stem().unwrap().to_string_lossy()
    ));
    let compiled = Command::new("gcc")
        .args(["-std=c11", "-O0", "-g", "-Wall", "-Wextra", "-Werror"])
        .arg("-I")
        .arg(root.join("include"))
        .arg(root.join(source))
        .arg(&library)
        .args(["-lpthread", "-ldl", "-lm", "-o"])
        .arg(&binary)
        .status()
        .expect("running gcc");
    assert!(compiled.success(), "gcc failed on {source}");
    let output = Command::new(&binary)
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
fn c_example_runs() {
    let out = build_and_run("examples/c/example.c");
    assert!(out.contains("402710577667408\tmodel"), "{out}");
    assert!(out.contains("snapshot: 3 entries"), "{out}");
}
