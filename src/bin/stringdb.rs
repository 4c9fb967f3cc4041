//! `stringdb`: the interner's ids from the command line.

use std::io::{self, BufRead, BufWriter, Write};
use std::process::ExitCode;

use interned_string_db::get_id;

const HELP: &str = "\
stringdb: deterministic interned-string ids (neuron_rustime::string_db compatible)

USAGE:
    stringdb id [STRING]...
    stringdb --help | --version

COMMANDS:
    id    Print `<id><TAB><string>` for each STRING, in order. With no STRING,
          read newline-separated strings from standard input and stream one
          answer per line. Only the `\\n` is stripped (a `\\r` is kept as data);
          an empty line is the empty string, which has an id too. Bytes need
          not be UTF-8: they are hashed and echoed as they are.

An id is (SipHash-1-3(key 0, bytes ++ [0xFF]) & (2^50 - 1)) + 1: the same in
every process, on every machine. 0 is no string's id.

EXAMPLE:
    $ stringdb id a model
    933183196555764\ta
    402710577667408\tmodel
";

fn main() -> ExitCode {
    let args: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
    let first = args.first().and_then(|a| a.to_str());
    let result = match first {
        None | Some("-h" | "--help" | "help") => {
            print!("{HELP}");
            return if first.is_none() {
                ExitCode::from(2)
            } else {
                ExitCode::SUCCESS
            };
        }
        Some("-V" | "--version") => {
            println!("stringdb {}", env!("CARGO_PKG_VERSION"));
            return ExitCode::SUCCESS;
        }
        Some("id") if args.len() > 1 => ids_of_args(&args[1..]),
        Some("id") => ids_of_stdin(),
        Some(other) => {
            eprintln!("stringdb: unknown command {other:?}; see `stringdb --help`");
            return ExitCode::from(2);
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        // A closed pipe (`stringdb id < big | head`) is a normal way to stop.
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("stringdb: {e}");
            ExitCode::FAILURE
        }
    }
}

fn write_line(out: &mut impl Write, bytes: &[u8]) -> io::Result<()> {
    let mut digits = [0u8; 20];
    out.write_all(format_u64(get_id(bytes), &mut digits))?;
    out.write_all(b"\t")?;
    out.write_all(bytes)?;
    out.write_all(b"\n")
}

/// Formats `n` in decimal into `buf` without going through `fmt`.
fn format_u64(mut n: u64, buf: &mut [u8; 20]) -> &[u8] {
    let mut at = buf.len();
    loop {
        at -= 1;
        buf[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            return &buf[at..];
        }
    }
}

fn ids_of_args(args: &[std::ffi::OsString]) -> io::Result<()> {
    let mut out = BufWriter::new(io::stdout().lock());
    for arg in args {
        write_line(&mut out, arg.as_encoded_bytes())?;
    }
    out.flush()
}

fn ids_of_stdin() -> io::Result<()> {
    let mut input = io::stdin().lock();
    let mut out = BufWriter::with_capacity(1 << 16, io::stdout().lock());
    let mut line = Vec::with_capacity(256);
    loop {
        line.clear();
        if input.read_until(b'\n', &mut line)? == 0 {
            break;
        }
        if line.last() == Some(&b'\n') {
            line.pop();
        }
        write_line(&mut out, &line)?;
    }
    out.flush()
}
