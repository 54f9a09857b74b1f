//! Case files: one run, written down so it replays bit for bit.
//!
//! ```text
//! # crashlab case
//! engine = crashlab          # the engine's name (absent: crashlab)
//! seed = 273
//! profile = default
//! expect = ok                 # ok | violation | disk-failure
//! ops = 300                   # generate this many from the seed (when there is no [ops])
//! options = page_size=1024 fill_percent=1 no_sync=false no_freelist_sync=false freelist=hashmap page_cache_pages=1024 presize=estimate
//!                             # the engine's own options, in its own words (see its adapter)
//! faults = read_eio=0 write_eio=0.012 sync_eio=0.03 latent=0 bit_flip=0 misdirect=0 enospc=none lying_sync=false garbage_unwritten=true
//! [ops]                       # optional: explicit operations, one per line (see `op.rs`)
//! create a
//! put a k1 len=10 v=1
//! commit
//! ```
//! `options` and `faults` are optional: without them the seed and profile decide, as in
//! `crashlab run`. Blank lines and `#` comments are ignored. A malformed file is reported with
//! its path, line number and what was expected.
//!
//! A case for the crash-state checker may add `check = ...` (its parameters) and, when it saves
//! a violation, `crash-state = ...` (the one state that shows it); see `spec.rs`. Such a
//! case replays through the checker, not the runner.
//!
//! A case is typed by its engine's configuration (`Case<C>`); [`engine_name`] reads which engine
//! a file names, so the command line can pick the engine once and parse the rest.

use crate::adapter::EngineConfig;
use crate::config::RunConfig;
use crate::disk::{DiskConfig, FaultConfig};
use crate::op::Op;
use crate::profile::{self, Profile};
use crate::spec::{CheckParams, CrashState};
use crate::verdict::Outcome;
use crate::workload;
use std::fmt::Write as _;
use std::path::Path;

/// The keys a case file may hold.
const KEYS: [&str; 9] = [
    "engine",
    "seed",
    "profile",
    "expect",
    "ops",
    "options",
    "faults",
    "check",
    "crash-state",
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

#[derive(Clone, Debug, PartialEq)]
pub struct Case<C> {
    pub run: RunConfig<C>,
    pub expect: Expect,
    /// Whether the operations are written out (otherwise they come from the seed).
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
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}: {}", self.file, self.line, self.message)
    }
}

/// The text of a case file, read whole.
pub fn read(path: &Path) -> Result<String, CaseError> {
    std::fs::read_to_string(path).map_err(|e| CaseError {
        file: path.display().to_string(),
        line: 0,
        message: format!("cannot read: {e}"),
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
    pub fn load(path: &Path) -> Result<Case<C>, CaseError> {
        Case::parse(&read(path)?, &path.display().to_string())
    }

    pub fn parse(text: &str, file: &str) -> Result<Case<C>, CaseError> {
        let err = |line: usize, message: String| CaseError {
            file: file.to_string(),
            line,
            message,
        };
        let mut fields: Vec<(usize, String, String)> = Vec::new();
        let mut ops: Option<Vec<Op>> = None;
        // The line of each listed operation, for errors found once the engine is known.
        let mut op_lines: Vec<usize> = Vec::new();
        for (i, raw) in text.lines().enumerate() {
            let n = i + 1;
            let line = raw.split('#').next().unwrap_or("").trim();
            if line.is_empty() {
                continue;
            }
            if let Some(list) = ops.as_mut() {
                list.push(line.parse::<Op>().map_err(|m| err(n, m))?);
                op_lines.push(n);
            } else if line == "[ops]" {
                ops = Some(Vec::new());
            } else {
                let (k, v) = line.split_once('=').ok_or_else(|| {
                    err(
                        n,
                        format!("expected `key = value` or `[ops]`, found `{line}`"),
                    )
                })?;
                fields.push((n, k.trim().to_string(), v.trim().to_string()));
            }
        }
        let get = |key: &str| fields.iter().find(|(_, k, _)| k == key);
        for (n, k, _) in &fields {
            if !KEYS.contains(&k.as_str()) {
                return Err(err(
                    *n,
                    format!("unknown key `{k}` (expected one of: {})", KEYS.join(", ")),
                ));
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
        let disk = match get("faults") {
            Some((n, _, v)) => DiskConfig {
                faults: parse_faults(v).map_err(|m| err(*n, m))?,
                ..DiskConfig::default()
            },
            None => profile::disk_config(seed, profile),
        };
        let check = match get("check") {
            Some((n, _, v)) => Some(v.parse::<CheckParams>().map_err(|m| err(*n, m))?),
            None => None,
        };
        let crash_state = match get("crash-state") {
            Some((n, _, v)) => Some(v.parse::<CrashState>().map_err(|m| err(*n, m))?),
            None => None,
        };
        if let (false, Some(list)) = (caps.concurrent_callers, &ops) {
            if let Some(i) = list.iter().position(|op| matches!(op, Op::Group { .. })) {
                let message = format!("{} has no concurrent callers: `{}`", C::ENGINE, list[i]);
                return Err(err(op_lines[i], message));
            }
        }
        if let (false, Some(list)) = (caps.nested_buckets, &ops) {
            let nested = list
                .iter()
                .position(|op| op.path().is_some_and(|p| p.len() > 1));
            if let Some(i) = nested {
                let message = format!("{} has no nested buckets: `{}`", C::ENGINE, list[i]);
                return Err(err(op_lines[i], message));
            }
        }
        let explicit_ops = ops.is_some();
        let ops = match (ops, get("ops")) {
            (Some(list), _) => list,
            (None, Some((n, _, v))) => {
                let count = v
                    .parse::<usize>()
                    .map_err(|_| err(*n, format!("expected a number of ops, found `{v}`")))?;
                workload::generate(seed, count, true, &caps)
            }
            (None, None) => return Err(err(1, "expected `ops = N` or an `[ops]` section".into())),
        };
        if let (Some((n, _, _)), Some(params)) = (get("check"), check) {
            params.supported_by(&engine).map_err(|why| err(*n, why))?;
        }
        Ok(Case {
            run: RunConfig {
                seed,
                profile,
                disk,
                ops,
                engine,
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
        if let Some(c) = &self.check {
            let _ = writeln!(s, "check = {c}");
        }
        if let Some(state) = &self.crash_state {
            let _ = writeln!(s, "crash-state = {state}");
        }
        if self.explicit_ops {
            s.push_str("[ops]\n");
            for op in &r.ops {
                let _ = writeln!(s, "{op}");
            }
        } else {
            let _ = writeln!(s, "ops = {}", r.ops.len());
        }
        s
    }
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

pub fn pairs(s: &str) -> Result<Vec<(&str, &str)>, String> {
    s.split_whitespace()
        .map(|w| {
            w.split_once('=')
                .ok_or_else(|| format!("expected `name=value`, found `{w}`"))
        })
        .collect()
}

pub fn num<T: std::str::FromStr>(k: &str, v: &str) -> Result<T, String> {
    v.parse()
        .map_err(|_| format!("`{v}` is not a valid value for `{k}`"))
}

pub fn flag(k: &str, v: &str) -> Result<bool, String> {
    match v {
        "true" => Ok(true),
        "false" => Ok(false),
        _ => Err(format!("expected true or false for `{k}`, found `{v}`")),
    }
}

pub fn format_faults(f: &FaultConfig) -> String {
    let enospc = f
        .enospc_capacity
        .map_or("none".to_string(), |c| c.to_string());
    format!(
        "read_eio={} write_eio={} sync_eio={} latent={} bit_flip={} misdirect={} enospc={enospc} lying_sync={} garbage_unwritten={}",
        f.read_eio, f.write_eio, f.sync_eio, f.latent, f.bit_flip, f.misdirect, f.lying_sync, f.garbage_unwritten
    )
}

fn parse_faults(s: &str) -> Result<FaultConfig, String> {
    let mut f = FaultConfig::none();
    for (k, v) in pairs(s)? {
        match k {
            "read_eio" => f.read_eio = num(k, v)?,
            "write_eio" => f.write_eio = num(k, v)?,
            "sync_eio" => f.sync_eio = num(k, v)?,
            "latent" => f.latent = num(k, v)?,
            "bit_flip" => f.bit_flip = num(k, v)?,
            "misdirect" => f.misdirect = num(k, v)?,
            "enospc" => f.enospc_capacity = if v == "none" { None } else { Some(num(k, v)?) },
            "lying_sync" => f.lying_sync = flag(k, v)?,
            "garbage_unwritten" => f.garbage_unwritten = flag(k, v)?,
            _ => return Err(format!("unknown fault `{k}`")),
        }
    }
    f.validate()?;
    Ok(f)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crashlab_engine::{Options, PresizePolicy};

    type Case = super::Case<Options>;
    type RunConfig = crate::config::RunConfig<Options>;

    #[test]
    fn a_case_round_trips_with_and_without_explicit_ops() {
        for explicit_ops in [false, true] {
            let case = Case {
                run: RunConfig::from_seed(5, 40, Profile::Default),
                expect: Expect::Violation,
                explicit_ops,
                check: None,
                crash_state: None,
            };
            let back = Case::parse(&case.to_text(), "t.case").unwrap();
            assert_eq!(back, case);
        }
    }

    #[test]
    fn a_check_case_round_trips_with_its_parameters_and_crash_state() {
        let mut run = RunConfig::from_seed(5, 20, Profile::None);
        run.engine.presize = PresizePolicy::Grow;
        let case = Case {
            run,
            expect: Expect::Violation,
            explicit_ops: true,
            check: Some(
                "batched=true control=no-barrier sector_size=64"
                    .parse()
                    .unwrap(),
            ),
            crash_state: Some("call=9 keep=1,3".parse().unwrap()),
        };
        let text = case.to_text();
        assert!(text.contains("presize=grow"), "{text}");
        assert_eq!(Case::parse(&text, "t.case").unwrap(), case);
        let bad = text.replace("keep=1,3", "keep=one");
        let e = Case::parse(&bad, "t.case").unwrap_err();
        let line = bad
            .lines()
            .position(|l| l.starts_with("crash-state"))
            .unwrap()
            + 1;
        assert_eq!(e.line, line, "{e}");
        assert!(e.message.contains("not a valid value for `keep`"), "{e}");
    }

    #[test]
    fn seeds_parse_as_decimal_or_commit_hash() {
        assert_eq!(parse_seed("42"), Ok(42));
        assert_eq!(
            parse_seed("00000000000000ff0123456789abcdef01234567"),
            Ok(255)
        );
        assert!(parse_seed("-1")
            .unwrap_err()
            .contains("decimal u64 or 40-hex"));
    }

    #[test]
    fn malformed_files_name_the_line_and_what_was_expected() {
        let e = Case::parse("seed = 1\nops = 5\nbogus\n", "x.case").unwrap_err();
        assert_eq!((e.file.as_str(), e.line), ("x.case", 3));
        assert!(e.message.contains("expected `key = value`"), "{e}");
        let e = Case::parse("seed = 1\n[ops]\ncreate a\nput a k\n", "x.case").unwrap_err();
        assert_eq!(e.line, 4);
        assert!(
            e.to_string()
                .starts_with("x.case:4: expected `put PATH KEY"),
            "{e}"
        );
        let e = Case::parse("seed = x\nops = 1\n", "x.case").unwrap_err();
        assert_eq!(e.line, 1);
        let e = Case::parse("seed = 1\nops = 1\nfaults = read_eio=2\n", "x.case").unwrap_err();
        assert!(e.message.contains("not a probability"), "{e}");
        let e = Case::parse("seed = 1\nops = 1\ncolour = red\n", "x.case").unwrap_err();
        assert!(e.message.contains("unknown key `colour`"), "{e}");
        let e = Case::parse("seed = 1\n", "x.case").unwrap_err();
        assert!(e.message.contains("expected `ops = N`"), "{e}");
    }
}
