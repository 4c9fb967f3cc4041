//! The `stringdb` binary.

use std::io::Write;
use std::process::{Command, Stdio};

#[path = "../../tests/it/common/snapshot_header.rs"]
mod snapshot_header;

fn stringdb() -> Command {
    Command::new(env!("CARGO_BIN_EXE_stringdb"))
}

/// `stringdb id` fed `input` on standard input: its standard output.
fn ids_of_stdin(input: &[u8]) -> String {
    let mut child = stringdb()
        .arg("id")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(input).unwrap();
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success());
    String::from_utf8(output.stdout).unwrap()
}

#[test]
fn ids_from_stdin() {
    assert_eq!(
        ids_of_stdin(b"a\nmodel\n"),
        "933183196555764\ta\n402710577667408\tmodel\n"
    );
}

#[test]
fn ids_from_arguments_in_order() {
    let output = stringdb()
        .args(["id", "tensor_0", "", "héllo"])
        .output()
        .unwrap();
    assert!(output.status.success());
    assert_eq!(
        String::from_utf8(output.stdout).unwrap(),
        "635820126496557\ttensor_0\n121655548788208\t\n588180410841216\théllo\n"
    );
}

#[test]
fn last_line_without_newline_and_crlf_kept() {
    let text = ids_of_stdin(b"a\r\nmodel");
    let lines: Vec<&str> = text.split_terminator('\n').collect();
    assert_eq!(lines.len(), 2);
    assert!(
        lines[0].ends_with("\ta\r"),
        "the \\r is data: {:?}",
        lines[0]
    );
    assert_eq!(lines[1], "402710577667408\tmodel");
}

#[test]
fn help_and_bad_usage() {
    let help = stringdb().arg("--help").output().unwrap();
    assert!(help.status.success());
    assert!(String::from_utf8(help.stdout)
        .unwrap()
        .contains("stringdb id [STRING]..."));
    let bad = stringdb().arg("frobnicate").output().unwrap();
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8(bad.stderr)
        .unwrap()
        .contains("unknown command"));
    assert_eq!(stringdb().output().unwrap().status.code(), Some(2));
}

// Snapshot files: merge, dump, export.

use std::fs;
use std::path::{Path, PathBuf};

use interned_string_db::{get_id, Config, InternedStringDb, Snapshot};

/// A directory of its own under the target directory, emptied.
fn scratch(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("cli-{name}"));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    dir
}

/// A snapshot file of `names` interned on two NCs, plus `(id, bytes)`
/// registered with a caller's id.
fn host_file(path: &Path, names: &[&str], registered: &[(u64, &[u8])]) -> Snapshot {
    let db: InternedStringDb = InternedStringDb::with_config(Config::new().ncs(2));
    for (i, name) in names.iter().enumerate() {
        db.intern(i % 2, name).unwrap();
    }
    for &(id, bytes) in registered {
        db.register(0, id, bytes).unwrap();
    }
    let snapshot = db.snapshot();
    snapshot.save(path).unwrap();
    snapshot
}

struct Run {
    code: Option<i32>,
    stdout: Vec<u8>,
    stderr: String,
}

fn run(args: &[std::ffi::OsString]) -> Run {
    let output = stringdb().args(args).output().unwrap();
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(!stderr.contains("panicked"), "{stderr}");
    Run {
        code: output.status.code(),
        stdout: output.stdout,
        stderr,
    }
}

fn os(items: &[&dyn AsRef<std::ffi::OsStr>]) -> Vec<std::ffi::OsString> {
    items.iter().map(|i| i.as_ref().to_owned()).collect()
}

#[test]
fn merge_unions_files_and_reports_conflicts() {
    let dir = scratch("merge");
    let (a, b, out) = (dir.join("a.isdb"), dir.join("b.isdb"), dir.join("out.isdb"));
    let sa = host_file(&a, &["shared", "only a"], &[(7, b"seven")]);
    let sb = host_file(&b, &["shared", "only b"], &[(7, b"sept")]);
    let r = run(&os(&[&"merge", &"-o", &out, &a, &b]));
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert_eq!(
        r.stderr,
        "stringdb: conflict on id 7: kept \"seven\", rejected \"sept\"\n"
    );
    let merged = Snapshot::load(&out).unwrap();
    assert_eq!(merged, Snapshot::merge([&sa, &sb]));
    assert_eq!(merged.len(), 4);
}

#[test]
fn dump_prints_sorted_lines_and_conflicts() {
    let dir = scratch("dump");
    let (a, b, merged) = (dir.join("a.isdb"), dir.join("b.isdb"), dir.join("m.isdb"));
    host_file(&a, &["tensor_0", "a"], &[(5, b"five")]);
    host_file(&b, &[], &[(5, b"cinq")]);
    assert_eq!(run(&os(&[&"merge", &"-o", &merged, &a, &b])).code, Some(0));
    let r = run(&os(&[&"dump", &merged]));
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert_eq!(
        String::from_utf8(r.stdout).unwrap(),
        format!(
            "5\tfive\n{}\ttensor_0\n{}\ta\n",
            get_id(b"tensor_0"),
            get_id(b"a")
        )
    );
    assert_eq!(
        r.stderr,
        "stringdb: conflict on id 5: kept \"five\", rejected \"cinq\"\n"
    );
}

#[test]
fn export_writes_parquet_ids_and_names() {
    use parquet::file::reader::{FileReader, SerializedFileReader};
    use parquet::record::RowAccessor;
    let dir = scratch("export");
    let (a, b, out) = (
        dir.join("a.isdb"),
        dir.join("b.isdb"),
        dir.join("d.parquet"),
    );
    host_file(&a, &["model_1/layer_2", "shared"], &[(u64::MAX, b"max")]);
    host_file(&b, &["shared", "héllo"], &[]);
    let r = run(&os(&[&"export", &"-o", &out, &a, &b]));
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    let reader = SerializedFileReader::new(fs::File::open(&out).unwrap()).unwrap();
    let schema = reader.metadata().file_metadata().schema_descr_ptr();
    assert_eq!(schema.column(0).name(), "id");
    assert_eq!(schema.column(1).name(), "name");
    let mut rows = Vec::new();
    for row in reader.get_row_iter(None).unwrap() {
        let row = row.unwrap();
        rows.push((
            row.get_ulong(0).unwrap(),
            row.get_string(1).unwrap().clone(),
        ));
    }
    let mut expected: Vec<(u64, String)> = ["model_1/layer_2", "shared", "héllo"]
        .iter()
        .map(|n| (get_id(n.as_bytes()), n.to_string()))
        .chain([(u64::MAX, "max".to_string())])
        .collect();
    expected.sort();
    assert_eq!(rows, expected);
}

#[test]
fn export_refuses_a_name_that_is_not_utf8_unless_lossy() {
    let dir = scratch("export-utf8");
    let (a, out) = (dir.join("a.isdb"), dir.join("d.parquet"));
    host_file(&a, &["fine"], &[(42, &[0x66, 0xff, 0x6f])]);
    let r = run(&os(&[&"export", &"-o", &out, &a]));
    assert_eq!(r.code, Some(1));
    assert!(
        r.stderr.contains("id 42") && r.stderr.contains("--lossy"),
        "{}",
        r.stderr
    );
    assert_eq!(r.stderr.lines().count(), 1);
    assert!(!out.exists(), "no output on an error");
    let r = run(&os(&[&"export", &"--lossy", &"-o", &out, &a]));
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert!(out.exists());
}

#[test]
fn bad_input_and_output_fail_cleanly_for_every_command() {
    let dir = scratch("bad");
    let good = dir.join("good.isdb");
    host_file(&good, &["x"], &[]);
    let corrupt = dir.join("corrupt.isdb");
    let mut bytes = fs::read(&good).unwrap();
    let last = bytes.len() - 10;
    bytes[last] ^= 1;
    fs::write(&corrupt, bytes).unwrap();
    let missing = dir.join("missing.isdb");
    let not_a_snapshot = dir.join("text.isdb");
    fs::write(&not_a_snapshot, "hello\n").unwrap();
    let out = dir.join("out");
    let no_dir = dir.join("no/such/dir/out");
    let cases: Vec<(Vec<std::ffi::OsString>, &str)> = vec![
        (
            os(&[&"merge", &"-o", &out, &good, &missing]),
            "missing.isdb",
        ),
        (os(&[&"merge", &"-o", &out, &corrupt]), "corrupt"),
        (
            os(&[&"merge", &"-o", &out, &not_a_snapshot]),
            "not a snapshot",
        ),
        (os(&[&"merge", &"-o", &no_dir, &good]), "does not exist"),
        (os(&[&"merge", &"-o", &dir, &good]), "is a directory"),
        (os(&[&"dump", &missing]), "missing.isdb"),
        (os(&[&"dump", &corrupt]), "corrupt"),
        (os(&[&"export", &"-o", &out, &corrupt]), "corrupt"),
        (os(&[&"export", &"-o", &out, &missing]), "missing.isdb"),
        (os(&[&"export", &"-o", &no_dir, &good]), "does not exist"),
    ];
    for (args, says) in cases {
        let r = run(&args);
        assert_eq!(r.code, Some(1), "{args:?}: {}", r.stderr);
        assert_eq!(r.stderr.lines().count(), 1, "{args:?}: {}", r.stderr);
        assert!(r.stderr.contains(says), "{args:?}: {}", r.stderr);
        assert!(!out.exists(), "{args:?} left an output");
    }
    // A bad input is named once, with the offset and the problem.
    for args in [
        os(&[&"dump", &not_a_snapshot]),
        os(&[&"merge", &"-o", &out, &good, &not_a_snapshot]),
        os(&[&"get", &not_a_snapshot, &"1"]),
    ] {
        let line = format!(
            "stringdb: {}: at byte 0: not a snapshot file (bad magic)",
            not_a_snapshot.display()
        );
        assert_eq!(run(&args).stderr.trim_end(), line, "{args:?}");
    }
    // An existing output is kept when the merge fails.
    fs::write(&out, "old").unwrap();
    assert_eq!(run(&os(&[&"merge", &"-o", &out, &corrupt])).code, Some(1));
    assert_eq!(fs::read_to_string(&out).unwrap(), "old");
    let names: Vec<_> = fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert!(
        names.iter().all(|n| !n.to_string_lossy().contains(".tmp")),
        "a temporary file was left: {names:?}"
    );
    // Usage errors: exit 2.
    assert_eq!(run(&os(&[&"merge", &"-o", &out])).code, Some(2));
    assert_eq!(run(&os(&[&"dump"])).code, Some(2));
}

/// `-o PATH` replaces only a regular file: a device (`/dev/null`,
/// `/dev/full`), a FIFO or a symbolic link at PATH is a one-line error and
/// exit status 1, for `merge` and `export`, and is still there afterwards,
/// unchanged; nothing is written through it and no temporary file is left.
#[test]
fn an_output_that_is_not_a_regular_file_is_refused() {
    use std::os::unix::fs::FileTypeExt;
    let dir = scratch("not-regular");
    let good = dir.join("good.isdb");
    host_file(&good, &["x"], &[]);
    let fifo = dir.join("fifo");
    let made = Command::new("mkfifo").arg(&fifo).status();
    assert!(made.unwrap().success(), "mkfifo");
    let target = dir.join("target.isdb");
    fs::write(&target, "old").unwrap();
    let link = dir.join("link.isdb");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let (null, full) = (PathBuf::from("/dev/null"), PathBuf::from("/dev/full"));
    for command in ["merge", "export"] {
        for (path, says) in [
            (&null, "is not a regular file"),
            (&full, "is not a regular file"),
            (&fifo, "is not a regular file"),
            (&link, "is a symbolic link"),
        ] {
            let args = os(&[&command, &"-o", path, &good]);
            let r = run(&args);
            assert_eq!(r.code, Some(1), "{args:?}: {}", r.stderr);
            assert_eq!(r.stderr.lines().count(), 1, "{args:?}: {}", r.stderr);
            assert!(r.stderr.contains(says), "{args:?}: {}", r.stderr);
            assert!(r.stdout.is_empty(), "{args:?}");
        }
    }
    let kind = |path: &PathBuf| fs::symlink_metadata(path).unwrap().file_type();
    assert!(kind(&null).is_char_device(), "/dev/null is still a device");
    assert!(kind(&full).is_char_device(), "/dev/full is still a device");
    assert!(kind(&fifo).is_fifo(), "the FIFO is still one");
    assert!(kind(&link).is_symlink(), "the link is still one");
    assert_eq!(fs::read_to_string(&target).unwrap(), "old");
    let mut names: Vec<_> = fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    assert_eq!(names, ["fifo", "good.isdb", "link.isdb", "target.isdb"]);
    // The path a link points to is written as any regular file is.
    let r = run(&os(&[&"merge", &"-o", &target, &good]));
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert_eq!(
        Snapshot::load(&target).unwrap(),
        Snapshot::load(&good).unwrap()
    );
}

/// A sparse file (1 TiB long, 64 bytes on disk) whose valid header claims
/// what such a length could hold: `dump` and `merge` print their one-line
/// error and exit 1, having allocated nothing for the claim (they aborted).
#[test]
fn a_sparse_file_claiming_huge_counts_fails_cleanly() {
    const TIB: u64 = 1 << 40;
    let dir = scratch("sparse");
    let out = dir.join("out.isdb");
    let claims = [
        ("entries", [(TIB - 72) / 16, 0, 0, 0]),
        ("conflicts", [0, 0, (TIB - 72) / 24, 0]),
    ];
    for (what, counts) in claims {
        let header = snapshot_header::file_header(counts);
        let path = dir.join(format!("{what}.isdb"));
        fs::write(&path, &header).unwrap();
        let file = fs::OpenOptions::new().write(true).open(&path).unwrap();
        if let Err(e) = file.set_len(TIB) {
            eprintln!("skipped: this filesystem cannot make a 1 TiB sparse file: {e}");
            return;
        }
        for args in [os(&[&"dump", &path]), os(&[&"merge", &"-o", &out, &path])] {
            let r = run(&args);
            assert_eq!(r.code, Some(1), "{what}, {args:?}: {}", r.stderr);
            assert_eq!(r.stderr.lines().count(), 1, "{what}: {}", r.stderr);
            assert!(
                r.stderr.contains(&format!("{what}.isdb: at byte ")),
                "{}",
                r.stderr
            );
            assert!(!out.exists());
        }
        fs::remove_file(&path).unwrap();
    }
}

#[test]
fn get_prints_names_of_ids_from_the_mapped_file() {
    let dir = scratch("get");
    let file = dir.join("dict.isdb");
    host_file(&file, &["model", "héllo"], &[(7, b"\xffseven")]);
    let (model, hello) = (get_id(b"model"), get_id("héllo".as_bytes()));
    let r = run(&os(&[
        &"get",
        &file,
        &hello.to_string(),
        &"7",
        &model.to_string(),
    ]));
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    let expected = format!("{hello}\théllo\n7\t\u{fffd}seven\n{model}\tmodel\n");
    assert_eq!(String::from_utf8_lossy(&r.stdout), expected);
    // An absent id: an error naming it, nothing printed.
    let r = run(&os(&[&"get", &file, &model.to_string(), &"8"]));
    assert_eq!(r.code, Some(1));
    assert!(r.stdout.is_empty());
    assert!(r.stderr.contains("id 8 is not in the file"), "{}", r.stderr);
    assert_eq!(r.stderr.lines().count(), 1, "{}", r.stderr);
    // A bad file, and a missing one: a one-line error.
    let bad = dir.join("bad.isdb");
    fs::write(&bad, b"ISDBSNAP short").unwrap();
    for path in [bad, dir.join("missing.isdb")] {
        let r = run(&os(&[&"get", &path, &"7"]));
        assert_eq!(r.code, Some(1));
        assert!(r.stderr.starts_with("stringdb: "), "{}", r.stderr);
        assert_eq!(r.stderr.lines().count(), 1, "{}", r.stderr);
    }
    // Not a number: a usage error.
    assert_eq!(run(&os(&[&"get", &file, &"x"])).code, Some(2));
}
