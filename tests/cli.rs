//! The `stringdb` binary.

use std::io::Write;
use std::process::{Command, Stdio};

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
