//! Case files: one run, written down so it replays bit for bit.
//!
//! ```text
//! # crashlab case
//! engine = crashlab          # the engine's name (absent: crashlab)
//! seed = 273
//! profile = default
//! expect = ok                 # ok | violation | disk-failure
//! ops = 300                   # the seed's workload of this many (its scale patterns on top under
//!                             # `scale`), when there is no [ops]; saved only when it regenerates them
//! options = page_size=1024 fill_percent=1 no_sync=false no_freelist_sync=false freelist=hashmap page_cache_pages=1024 presize=estimate
//!                             # the engine's own options, in its own words (see its adapter)
//! faults = read_eio=0 write_eio=0.012 sync_eio=0.03 latent=0 bit_flip=0 misdirect=0 enospc=none lying_sync=false garbage_unwritten=true sub_sector_tear=0.2
//! disk = sector_size=256 length=own-barrier
//! after-failure = retry       # restart | retry | carry-on after a failed commit (absent: restart)
//! power-cut = cut=3 keep=16,17 torn=25@40..512   # optional: the 3rd power cut's outcome, pinned
//! fs = model=strict          # an engine of several files only: the metadata crash model
//!                             # (absent: drawn from the seed); see `docs/simfs.md`
//! sessions = switch           # sessions after the first open with other settings, as the
//!                             # engine's adapter draws them (absent: `same`, one for all)
//! [ops]                       # optional: explicit operations, one per line (see `op.rs`)
//! create a
//! put a k1 len=10 v=1
//! commit
//! ```
//! `options` and `faults` are optional: without them the seed and profile decide, as in
//! `crashlab run`. `disk` is optional too, but without it the disk is the one every case had
//! before sector sizes and length models were swarmed — 512-byte sectors, `with-data` — so a
//! saved case replays as it always did (likewise `sub_sector_tear` missing from `faults` is 0).
//! Blank lines and `#` comments are ignored. A malformed file is reported with
//! its path, line number and what was expected.
//!
//! A case for the crash-state checker may add `check = ...` (its parameters) and, when it saves
//! a violation, `crash-state = ...` (the one state that shows it); see `spec.rs`. Such a case
//! replays through the checker, not the runner.
//!
//! A case is typed by its engine's configuration (`Case<C>`); [`engine_name`] reads which engine
//! a file names, so the command line can pick the engine once and parse the rest.

use crate::adapter::EngineConfig;
use crate::config::{fs_config_from_seed, seed_ops, AfterFailure, RunConfig};
use crate::disk::{DiskConfig, LengthModel, PinnedCut, SECTOR_SIZE_DEFAULT};
use crate::fs::FsConfig;
use crate::input;
use crate::limits::CASE_FILE_BYTES_MAX;
use crate::op::Op;
use crate::profile::{self, Profile};
use crate::spec::{CheckParams, CrashState};
use crate::verdict::Outcome;
use crashlab_models::KEY_LEN_MAX;
use lines::{op_count, Lines};
pub use settings::{format_disk, format_faults, format_fs};
use settings::{parse_disk, parse_faults, parse_fs};
use std::fmt::Write as _;
use std::path::Path;

mod lines;
mod settings;

/// The keys a case file may hold.
const KEYS: [&str; 14] = [
    "engine",
    "seed",
    "profile",
    "expect",
    "ops",
    "options",
    "faults",
    "disk",
    "after-failure",
    "check",
    "crash-state",
    "power-cut",
    "fs",
    "sessions",
];

/// What a case expects its run to end with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Expect {
    Ok,
    Violation,
    DiskFailure,
}

impl Expect {
    pub fn of(outcome: &Outcome) -> Expect {
        match outcome {
            Outcome::Ok => Expect::Ok,
            Outcome::Violation(_) => Expect::Violation,
            Outcome::DiskFailure(_) => Expect::DiskFailure,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Expect::Ok => "ok",
            Expect::Violation => "violation",
            Expect::DiskFailure => "disk-failure",
        }
    }
}

/// A run written down: its configuration (seed, profile, faults, disk, engine options and,
/// with `explicit_ops`, the operations) and the outcome it must replay to. Text through
/// [`Case::to_text`] and back through [`Case::parse`]; `corpus/` holds crashlab's own.
#[derive(Clone, Debug, PartialEq)]
pub struct Case<C> {
    /// The run to replay: [`crate::runner::run`] takes it as it is.
    pub run: RunConfig<C>,
    /// The outcome the replay must give.
    pub expect: Expect,
    /// Whether the operations are written out. Otherwise they come from the seed, as `ops = N`,
    /// unless no count regenerates them exactly; then they are written out all the same.
    pub explicit_ops: bool,
    /// The crash-state checker's parameters, for a check case.
    pub check: Option<CheckParams>,
    /// The one crash state a saved check violation names.
    pub crash_state: Option<CrashState>,
}

/// A malformed case file: where, and what was expected.
#[derive(Debug, PartialEq, Eq)]
pub struct CaseError {
    pub file: String,
    pub line: usize,
    pub message: String,
}

impl std::fmt::Display for CaseError {
    /// `file:line: message`, or `file: message` for the file as a whole (line 0).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.line {
            0 => write!(f, "{}: {}", self.file, self.message),
            n => write!(f, "{}:{n}: {}", self.file, self.message),
        }
    }
}

/// The text of the case file at `path`: refused unread when it is not a regular file or is
/// larger than [`CASE_FILE_BYTES_MAX`].
pub fn read(path: &Path) -> Result<String, CaseError> {
    let file = path.display().to_string();
    input::read_text(path, CASE_FILE_BYTES_MAX, "a case file").map_err(|e| CaseError {
        file,
        line: e.line,
        message: e.message,
    })
}

/// The engine a case's text names (`engine = NAME`; absent: crashlab), and its line.
pub fn engine_name(text: &str) -> (String, usize) {
    for (i, raw) in text.lines().enumerate() {
        let line = raw.split('#').next().unwrap_or("").trim();
        if line == "[ops]" {
            break;
        }
        if let Some((k, v)) = line.split_once('=') {
            if k.trim() == "engine" {
                return (v.trim().to_string(), i + 1);
            }
        }
    }
    ("crashlab".to_string(), 1)
}

impl<C: EngineConfig> Case<C> {
    /// Read and parse the case file at `path` (see [`read`]).
    pub fn load(path: &Path) -> Result<Case<C>, CaseError> {
        Case::parse(&read(path)?, &path.display().to_string())
    }

    /// [`Case::load`] for `crashlab check --case`: the workload is held to the checker's
    /// [`crate::limits::CHECK_OPS_MAX`] whether or not the case has a `check` line.
    pub fn load_for_check(path: &Path) -> Result<Case<C>, CaseError> {
        Case::parse_for_check(&read(path)?, &path.display().to_string())
    }

    /// Parse case text; `file` names it in errors.
    pub fn parse(text: &str, file: &str) -> Result<Case<C>, CaseError> {
        Case::parse_with(text, file, false)
    }

    /// [`Case::parse`] held to the checker's limits.
    pub fn parse_for_check(text: &str, file: &str) -> Result<Case<C>, CaseError> {
        Case::parse_with(text, file, true)
    }

    fn parse_with(text: &str, file: &str, for_check: bool) -> Result<Case<C>, CaseError> {
        let err = |line: usize, message: String| CaseError {
            file: file.to_string(),
            line,
            message,
        };
        let lines = Lines::read(text, for_check).map_err(|(n, m)| err(n, m))?;
        let fields = &lines.fields;
        let get = |key: &str| fields.iter().find(|(_, k, _)| k == key);
        for (i, (n, k, _)) in fields.iter().enumerate() {
            if !KEYS.contains(&k.as_str()) {
                return Err(err(
                    *n,
                    format!("unknown key `{k}` (expected one of: {})", KEYS.join(", ")),
                ));
            }
            // `get` reads the first; a second would be silently ignored. The scan is short:
            // every key before this one is a known key, so it meets a repeat within KEYS.len().
            if let Some((first, _, _)) = fields[..i].iter().find(|(_, seen, _)| seen == k) {
                let m = format!(
                    "`{k}` is given twice (first on line {first}): a case sets each key once"
                );
                return Err(err(*n, m));
            }
        }
        let (sn, _, sv) = get("seed").ok_or_else(|| err(1, "missing `seed = N`".into()))?;
        let seed = parse_seed(sv).map_err(|m| err(*sn, m))?;
        let (engine_line, named) = match get("engine") {
            Some((n, _, v)) => (*n, v.as_str()),
            None => (1, "crashlab"),
        };
        if named != C::ENGINE {
            let message = format!("the case is for engine `{named}`, not {}", C::ENGINE);
            return Err(err(engine_line, message));
        }
        let profile = match get("profile") {
            Some((n, _, v)) => v.parse::<Profile>().map_err(|m| err(*n, m))?,
            None => Profile::Default,
        };
        let expect = match get("expect") {
            Some((n, _, v)) => parse_expect(v).map_err(|m| err(*n, m))?,
            None => Expect::Ok,
        };
        let engine = match get("options") {
            Some((n, _, v)) => C::parse_case_text(v, seed, profile).map_err(|m| err(*n, m))?,
            None => C::from_seed(seed, profile),
        };
        let caps = engine.capabilities();
        let faults = match get("faults") {
            Some((n, _, v)) => parse_faults(v).map_err(|m| err(*n, m))?,
            None => profile::disk_config(seed, profile).faults,
        };
        let (sector_size, length) = match get("disk") {
            Some((n, _, v)) => parse_disk(v).map_err(|m| err(*n, m))?,
            None => (SECTOR_SIZE_DEFAULT, LengthModel::WithData),
        };
        if let (Some(needed), Some((n, _, _))) = (profile.control().length_model(), get("disk")) {
            if needed != length {
                let message = format!("profile {profile} runs on an {needed} disk, not {length}");
                return Err(err(*n, message));
            }
        }
        let disk = DiskConfig {
            sector_size,
            length: profile.control().length_model().unwrap_or(length),
            faults,
            ..DiskConfig::default()
        };
        let check = match get("check") {
            Some((n, _, v)) => Some(v.parse::<CheckParams>().map_err(|m| err(*n, m))?),
            None => None,
        };
        let crash_state = match get("crash-state") {
            Some((n, _, v)) => Some(v.parse::<CrashState>().map_err(|m| err(*n, m))?),
            None => None,
        };
        if let (false, Some(list)) = (caps.concurrent_callers, &lines.ops) {
            if let Some(i) = list.iter().position(|op| matches!(op, Op::Group { .. })) {
                let message = format!("{} has no concurrent callers: `{}`", C::ENGINE, list[i]);
                return Err(err(lines.op_lines[i], message));
            }
        }
        if let (false, Some(list)) = (caps.nested_buckets, &lines.ops) {
            let nested = list
                .iter()
                .position(|op| op.path().is_some_and(|p| p.len() > 1));
            if let Some(i) = nested {
                let message = format!("{} has no nested buckets: `{}`", C::ENGINE, list[i]);
                return Err(err(lines.op_lines[i], message));
            }
        }
        if let (false, Some(list)) = (caps.refuses_long_keys, &lines.ops) {
            let long = list.iter().map(longest_name).position(|n| n > KEY_LEN_MAX);
            if let Some(i) = long {
                let message = format!(
                    "`{}` names a key or bucket of {} bytes, but {} declares no key limit, so \
                     names take at most {KEY_LEN_MAX} bytes (KEY_LEN_MAX)",
                    list[i].kind(),
                    longest_name(&list[i]),
                    C::ENGINE,
                );
                return Err(err(lines.op_lines[i], message));
            }
        }
        let explicit_ops = lines.ops.is_some();
        let ops = match (lines.ops, get("ops")) {
            (Some(list), _) => list,
            (None, Some((n, _, v))) => {
                let count = op_count(v, lines.ops_max).map_err(|m| err(*n, m))?;
                seed_ops(seed, count, profile, &caps)
            }
            (None, None) => return Err(err(1, "expected `ops = N` or an `[ops]` section".into())),
        };
        if let (Some((n, _, _)), Some(CrashState::Live { op })) = (get("crash-state"), &crash_state)
        {
            if *op >= ops.len() {
                let message = format!(
                    "live op={op} is past the workload's last operation ({} ops, numbered from 0)",
                    ops.len()
                );
                return Err(err(*n, message));
            }
        }
        if let (Some((n, _, _)), Some(params)) = (get("check"), check) {
            params.supported_by(&engine).map_err(|why| err(*n, why))?;
        }
        let pinned_cut = match get("power-cut") {
            Some((n, _, v)) => {
                let p = v.parse::<PinnedCut>().map_err(|m| err(*n, m))?;
                let ss = disk.sector_size as usize;
                if let Some((s, old)) = p.pin.torn.iter().find(|(_, old)| old.end > ss) {
                    let m = format!("torn sector {s}: bytes {old:?} pass the {ss}-byte sector");
                    return Err(err(*n, m));
                }
                Some(p)
            }
            None => None,
        };
        if let Some((n, _, _)) = get("profile") {
            profile
                .fits(C::ENGINE, caps.directory)
                .map_err(|m| err(*n, m))?;
        }
        let fs = match (get("fs"), caps.directory) {
            (Some((n, _, v)), true) => parse_fs(v).map_err(|m| err(*n, m))?,
            (Some((n, _, _)), false) => {
                let m = format!(
                    "{} keeps one file: `fs` is for engines of several files",
                    C::ENGINE
                );
                return Err(err(*n, m));
            }
            (None, true) => fs_config_from_seed(seed),
            (None, false) => FsConfig::default(),
        };
        // Absent: the restart every case saved before the choice existed made.
        let after_failure = match get("after-failure") {
            Some((n, _, v)) => v.parse::<AfterFailure>().map_err(|m| err(*n, m))?,
            None => AfterFailure::Restart,
        };
        // Absent: one configuration for every session, as every case saved before the choice.
        let switch_settings = match get("sessions") {
            None => false,
            Some((n, _, v)) => match v.as_str() {
                "switch" => true,
                "same" => false,
                _ => {
                    let m = format!("sessions: expected `same` or `switch`, got `{v}`");
                    return Err(err(*n, m));
                }
            },
        };
        Ok(Case {
            run: RunConfig {
                seed,
                profile,
                disk,
                ops,
                engine,
                after_failure,
                pinned_cut,
                fs,
                switch_settings,
            },
            expect,
            explicit_ops,
            check,
            crash_state,
        })
    }

    /// The file text; operations are written out when `explicit_ops` is set.
    pub fn to_text(&self) -> String {
        let r = &self.run;
        let mut s = String::from("# crashlab case — replay with: crashlab repro <this file>\n");
        let _ = writeln!(s, "engine = {}", C::ENGINE);
        let _ = writeln!(s, "seed = {}", r.seed);
        let _ = writeln!(s, "profile = {}", r.profile);
        let _ = writeln!(s, "expect = {}", self.expect.name());
        if let Some(options) = r.engine.to_case_text() {
            let _ = writeln!(s, "options = {options}");
        }
        let _ = writeln!(s, "faults = {}", format_faults(&r.disk.faults));
        let _ = writeln!(s, "disk = {}", format_disk(&r.disk));
        let _ = writeln!(s, "after-failure = {}", r.after_failure);
        if r.engine.capabilities().directory {
            let _ = writeln!(s, "fs = {}", format_fs(&r.fs));
        }
        if r.switch_settings {
            let _ = writeln!(s, "sessions = switch");
        }
        if let Some(c) = &self.check {
            let _ = writeln!(s, "check = {c}");
        }
        if let Some(state) = &self.crash_state {
            let _ = writeln!(s, "crash-state = {state}");
        }
        if let Some(cut) = &r.pinned_cut {
            let _ = writeln!(s, "power-cut = {cut}");
        }
        // Without its operations only when asked and the seed regenerates them exactly (which
        // takes generating them: not done for a case that writes them out anyway).
        let count = match self.explicit_ops {
            true => None,
            false => r.seed_op_count(),
        };
        match count {
            Some(count) => {
                let _ = writeln!(s, "ops = {count}");
            }
            None => {
                s.push_str("[ops]\n");
                for op in &r.ops {
                    let _ = writeln!(s, "{op}");
                }
            }
        }
        s
    }
}

/// The longest key or bucket name `op` writes under (a put's key, a path's names): what an
/// engine with a key limit refuses past it.
fn longest_name(op: &Op) -> usize {
    let key = match op {
        Op::Put { key, .. } => key.0.len(),
        _ => 0,
    };
    let names = op
        .path()
        .map_or(0, |p| p.iter().map(|n| n.0.len()).max().unwrap_or(0));
    key.max(names)
}

/// A seed: a decimal u64, or a 40-hex-digit commit hash (its first 16 digits).
pub fn parse_seed(s: &str) -> Result<u64, String> {
    if s.len() == 40 && s.bytes().all(|b| b.is_ascii_hexdigit()) {
        return u64::from_str_radix(&s[..16], 16).map_err(|e| e.to_string());
    }
    s.parse::<u64>()
        .map_err(|_| format!("expected a seed (decimal u64 or 40-hex commit hash), found `{s}`"))
}

fn parse_expect(s: &str) -> Result<Expect, String> {
    match s {
        "ok" => Ok(Expect::Ok),
        "violation" => Ok(Expect::Violation),
        "disk-failure" => Ok(Expect::DiskFailure),
        _ => Err(format!(
            "expected ok, violation or disk-failure, found `{s}`"
        )),
    }
}

#[cfg(test)]
#[path = "case_tests.rs"]
mod tests;
