//! `crashlab db`: look inside a bbolt-format database file (a production file, a bbolt fixture,
//! or a disk image saved by `crashlab repro --save-image`), as bbolt's command-line tool does.
//!
//! Every command only reads. Exit codes: 0 done and nothing wrong met; 1 damage found (`check`
//! lists it on stdout; the other commands print what they could read and name the damage on
//! stderr); 2 the file cannot be read at all (missing, not a regular file — a directory, FIFO,
//! device or socket, refused before it is opened —, empty, truncated, no valid meta) or the
//! output cannot be written. The engine's `inspect` module does the reading; this
//! module only words and lays out its results.

#![forbid(unsafe_code)]

mod check;
mod dump;
mod info;
mod pages;
mod show;
mod stats;

use clap::Subcommand;
use crashlab_engine::{FileStorage, Problem};
use crashlab_format::inspect::Image;
use crashlab_format::Error;
use crashlab_sim::input::Refusal;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Subcommand, Clone, Debug)]
pub enum DbCommand {
    /// Page size, both meta pages, and which one is in use.
    Info { file: PathBuf },
    /// The engine's consistency check: every problem, or OK (exit 0 clean, 1 problems found).
    Check { file: PathBuf },
    /// One line per page or run of pages: id, type, elements, overflow, owning bucket.
    Pages {
        file: PathBuf,
        /// Show this page's header and elements instead.
        #[arg(long)]
        page: Option<u64>,
    },
    /// Pages and bytes by type, fill of branch and leaf pages, tree depth per bucket, free set.
    Stats { file: PathBuf },
    /// Every bucket (nested) and key/value.
    Dump {
        file: PathBuf,
        /// {"page_size": N, "buckets": {PATH: {KEY: VALUE}}, "sequences": {PATH: N}}, in hex.
        #[arg(long)]
        json: bool,
    },
}

impl DbCommand {
    pub fn file(&self) -> &Path {
        match self {
            DbCommand::Info { file }
            | DbCommand::Check { file }
            | DbCommand::Pages { file, .. }
            | DbCommand::Stats { file }
            | DbCommand::Dump { file, .. } => file,
        }
    }
}

/// Exit code 0: done, nothing wrong met.
pub const CLEAN: u8 = 0;
/// Exit code 1: damage found.
pub const DAMAGED: u8 = 1;
/// Exit code 2: the file cannot be read, or the output cannot be written.
pub const UNREADABLE: u8 = 2;

/// Why a command stopped early.
enum Failure {
    /// The file could not be read (the reason, in a user's words).
    Read(String),
    Write(io::Error),
}

impl From<Error> for Failure {
    fn from(e: Error) -> Failure {
        Failure::Read(describe(&e))
    }
}

impl From<crashlab_engine::Error> for Failure {
    fn from(e: crashlab_engine::Error) -> Failure {
        Failure::Read(match e {
            crashlab_engine::Error::Format(e) => describe(&e),
            e => e.to_string(),
        })
    }
}

impl From<io::Error> for Failure {
    fn from(e: io::Error) -> Failure {
        Failure::Write(e)
    }
}

/// What a command returns: its exit code, or why it stopped.
type Outcome = Result<u8, Failure>;

/// Run `cmd` with stdout and stderr.
pub fn run(cmd: &DbCommand) -> ExitCode {
    let stdout = io::stdout();
    let mut out = io::BufWriter::new(stdout.lock());
    let code = run_to(cmd, &mut out, &mut io::stderr());
    let flushed = out.flush();
    ExitCode::from(match flushed {
        Err(e) if e.kind() != io::ErrorKind::BrokenPipe => UNREADABLE,
        _ => code,
    })
}

/// Run `cmd`, writing its report to `out` and its complaints to `err`; returns the exit code.
pub fn run_to(cmd: &DbCommand, out: &mut dyn Write, err: &mut dyn Write) -> u8 {
    let file = cmd.file();
    let image = match open(file) {
        Ok(image) => image,
        Err(why) => return complain(err, file, &why),
    };
    let outcome = match cmd {
        DbCommand::Info { .. } => info::print(&image, file, out),
        DbCommand::Check { .. } => check::print(&image, file, out),
        DbCommand::Pages { page: None, .. } => pages::print_map(&image, out, err),
        DbCommand::Pages { page: Some(id), .. } => pages::print_page(&image, *id, out, err),
        DbCommand::Stats { .. } => stats::print(&image, out, err),
        DbCommand::Dump { json, .. } => dump::print(&image, *json, out, err),
    };
    match outcome {
        Ok(code) => code,
        Err(Failure::Read(why)) => complain(err, file, &format!("cannot read: {why}")),
        // The reader went away (`| head`): nothing is wrong with the file.
        Err(Failure::Write(e)) if e.kind() == io::ErrorKind::BrokenPipe => CLEAN,
        Err(Failure::Write(e)) => complain(err, file, &format!("cannot write the output: {e}")),
    }
}

fn complain(err: &mut dyn Write, file: &Path, why: &str) -> u8 {
    // Nothing better to do if stderr itself is gone.
    let _ = writeln!(err, "crashlab db: {}: {why}", file.display());
    UNREADABLE
}

/// Open `file` read-only, or say in a user's words why it cannot be read at all.
fn open(file: &Path) -> Result<Image, String> {
    // Before the open: opening a FIFO with no writer would block for ever.
    crashlab_sim::input::regular_file(file).map_err(|r| match r {
        Refusal::NotRegular(what) => format!("is {what}, not a database file"),
        r => r.to_string(),
    })?;
    let storage = FileStorage::open_read_only(file).map_err(|e| format!("cannot open: {e}"))?;
    Image::open(storage).map_err(|e| match e {
        Error::Truncated { len: 0, .. } => "the file is empty".into(),
        Error::Truncated { len, needed } => format!(
            "truncated: {len} bytes, but the meta in use needs {needed} (its high-water mark)"
        ),
        Error::NoValidMeta { meta0, meta1 } => format!(
            "not a database file, or both meta pages are damaged: meta 0: {}; meta 1: {}",
            describe(&meta0),
            describe(&meta1)
        ),
        e => format!("cannot read: {}", describe(&e)),
    })
}

/// A format error in a sentence that does not repeat the page a caller already names.
fn describe(e: &Error) -> String {
    match e {
        Error::Corrupted { reason, .. } => reason.to_string(),
        Error::ChecksumMismatch {
            stored, computed, ..
        } => format!("checksum mismatch (stored {stored:#018x}, computed {computed:#018x})"),
        e => e.to_string(),
    }
}

/// Name the damage a command met on stderr, pointing at `check` for the whole story.
fn report_damage(problems: &[Problem], err: &mut dyn Write) -> Outcome {
    if problems.is_empty() {
        return Ok(CLEAN);
    }
    for p in problems {
        writeln!(err, "damage: {p}")?;
    }
    writeln!(
        err,
        "{} damaged place(s) met: what lies under them is not in the output; \
         `crashlab db check` lists every problem",
        problems.len()
    )?;
    Ok(DAMAGED)
}
