//! `stringdb`: the interner's ids from the command line, and its snapshot
//! files: merge them, dump them, export them to Parquet.

mod export;
mod get;
mod output;

use std::ffi::OsString;
use std::io::{self, BufRead, BufWriter, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use indicatif::{ProgressBar, ProgressStyle};
use interned_string_db::{get_id, Snapshot};

const ABOUT: &str = "\
stringdb: deterministic interned-string ids (neuron_rustime::string_db compatible)

An id is (SipHash-1-3(key 0, bytes ++ [0xFF]) & (2^50 - 1)) + 1: the same in
every process, on every machine. 0 is no string's id. So snapshot files from
many processes and hosts merge by union, with no remapping.";

const USAGE: &str = "\
stringdb id [STRING]...
       stringdb merge -o OUT IN...
       stringdb dump IN
       stringdb get IN ID...
       stringdb export [--lossy] -o OUT.parquet IN...
       stringdb --help | --version";

const AFTER: &str = "\
EXAMPLE:
    $ stringdb id a model
    933183196555764\ta
    402710577667408\tmodel

Exit status: 0 on success (conflicts are reported on stderr, not failures),
1 when an input or output is bad (a one-line error on stderr; no partial
output file is left), 2 for a usage error.

An output (-o PATH) is written to a temporary file beside PATH, then renamed
over it: PATH must be absent or a regular file. A directory, a symbolic link
(even to a regular file), a device such as /dev/null or /dev/stdout, a FIFO
or a socket at PATH is refused (exit status 1), never replaced or written
through.";

#[derive(Parser)]
#[command(
    name = "stringdb",
    version,
    about = ABOUT,
    override_usage = USAGE,
    after_help = AFTER,
    arg_required_else_help = true
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Print `<id><TAB><string>` for each STRING, in order. With no STRING,
    /// read newline-separated strings from standard input and stream one
    /// answer per line. Only the `\n` is stripped (a `\r` is kept as data);
    /// an empty line is the empty string, which has an id too. Bytes need not
    /// be UTF-8: they are hashed and echoed as they are.
    Id {
        /// Strings to print the ids of.
        strings: Vec<OsString>,
    },
    /// Merge snapshot files (from many processes or hosts) into one: each id
    /// once, with the first input's string; conflicts (one id, two strings)
    /// are reported on stderr with both strings.
    Merge {
        /// The merged snapshot file (written atomically; if it exists it
        /// must be a regular file, see below).
        #[arg(short, long)]
        output: PathBuf,
        /// Snapshot files, in order of precedence.
        #[arg(required = true)]
        inputs: Vec<PathBuf>,
    },
    /// Print a snapshot file's entries as `<id><TAB><name>` lines, sorted by
    /// id (names as their bytes); conflicts on stderr.
    Dump {
        /// A snapshot file.
        input: PathBuf,
    },
    /// Print `<id><TAB><name>` for each ID, in order, reading the snapshot
    /// file in place (mapped): only its header and what each lookup reads,
    /// so a few names out of a large file cost a few reads. An ID the file
    /// does not hold is an error (exit status 1, the id named, nothing
    /// printed), as is a bad file; the file's checksums are not checked
    /// (`stringdb dump` checks them).
    Get {
        /// A snapshot file.
        input: PathBuf,
        /// Ids (decimal) to print the names of.
        #[arg(required = true)]
        ids: Vec<u64>,
    },
    /// Merge snapshot files and write a Parquet file with columns `id`
    /// (unsigned 64-bit) and `name` (UTF-8 string), sorted by id.
    Export {
        /// The Parquet file (written atomically; if it exists it must be a
        /// regular file, see below).
        #[arg(short, long)]
        output: PathBuf,
        /// Write a name that is not UTF-8 with each invalid byte sequence
        /// replaced by U+FFFD (its id still names the original bytes).
        /// Without it, such a name is an error naming its id.
        #[arg(long)]
        lossy: bool,
        /// Snapshot files, in order of precedence.
        #[arg(required = true)]
        inputs: Vec<PathBuf>,
    },
}

/// A failure: one line for stderr.
struct Failure(String);

impl<E: std::fmt::Display> From<(&Path, E)> for Failure {
    fn from((path, e): (&Path, E)) -> Self {
        Failure(format!("{}: {e}", path.display()))
    }
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) if e.kind() == clap::error::ErrorKind::InvalidSubcommand => {
            let what = e
                .get(clap::error::ContextKind::InvalidSubcommand)
                .map(ToString::to_string)
                .unwrap_or_default();
            eprintln!("stringdb: unknown command {what:?}; see `stringdb --help`");
            return ExitCode::from(2);
        }
        Err(e) => e.exit(),
    };
    let result = match cli.command {
        Command::Id { strings } if strings.is_empty() => finish_io(ids_of_stdin()),
        Command::Id { strings } => finish_io(ids_of_args(&strings)),
        Command::Merge { output, inputs } => merge(&output, &inputs),
        Command::Dump { input } => dump(&input),
        Command::Get { input, ids } => get::get(&input, &ids),
        Command::Export {
            output,
            lossy,
            inputs,
        } => export::export(&output, &inputs, lossy),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(Failure(message)) => {
            eprintln!("stringdb: {message}");
            ExitCode::FAILURE
        }
    }
}

/// Success for a closed pipe (`stringdb id < big | head` is a normal way to
/// stop), a failure for any other error.
fn finish_io(result: io::Result<()>) -> Result<(), Failure> {
    match result {
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Ok(()),
        other => other.map_err(|e| Failure(e.to_string())),
    }
}

/// A progress bar on stderr when it is a terminal, hidden otherwise.
fn progress(len: u64, what: &str) -> ProgressBar {
    if !io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new(len);
    if let Ok(style) = ProgressStyle::with_template("{msg} {wide_bar} {pos}/{len} ({eta})") {
        bar.set_style(style);
    }
    bar.set_message(what.to_owned());
    bar
}

/// Loads `inputs` and merges them, reporting conflicts on stderr.
fn load_and_merge(inputs: &[PathBuf]) -> Result<Snapshot, Failure> {
    let bar = progress(inputs.len() as u64, "reading");
    let mut snapshots = Vec::with_capacity(inputs.len());
    for path in inputs {
        // A `LoadError` names its file.
        snapshots.push(Snapshot::load(path).map_err(|e| Failure(e.to_string()))?);
        bar.inc(1);
    }
    bar.finish_and_clear();
    let merged = if let [one] = &snapshots[..] {
        one.clone()
    } else {
        Snapshot::merge(&snapshots)
    };
    report_conflicts(&merged);
    Ok(merged)
}

fn report_conflicts(snapshot: &Snapshot) {
    let mut err = io::stderr().lock();
    for c in snapshot.conflicts() {
        let _ = writeln!(
            err,
            "stringdb: conflict on id {}: kept {:?}, rejected {:?}",
            c.id,
            String::from_utf8_lossy(&c.kept),
            String::from_utf8_lossy(&c.rejected)
        );
    }
}

fn merge(output: &Path, inputs: &[PathBuf]) -> Result<(), Failure> {
    output::check_writable(output)?;
    let merged = load_and_merge(inputs)?;
    merged.save(output).map_err(|e| Failure::from((output, e)))
}

fn dump(input: &Path) -> Result<(), Failure> {
    let snapshot = load_and_merge(&[input.to_owned()])?;
    let mut out = BufWriter::with_capacity(1 << 16, io::stdout().lock());
    let mut digits = [0u8; 20];
    finish_io((|| {
        for (id, name) in &snapshot {
            out.write_all(format_u64(id, &mut digits))?;
            out.write_all(b"\t")?;
            out.write_all(name)?;
            out.write_all(b"\n")?;
        }
        out.flush()
    })())
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

fn ids_of_args(args: &[OsString]) -> io::Result<()> {
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

#[cfg(test)]
mod tests {
    #[test]
    fn the_command_line_definition_is_consistent() {
        use clap::CommandFactory;
        super::Cli::command().debug_assert();
    }
}
