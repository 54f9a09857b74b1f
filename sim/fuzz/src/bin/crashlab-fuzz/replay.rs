//! Replaying saved inputs, each in a worker with the cap and the deadline, and shrinking one to
//! the fewest edits and writes that still fail the same way.

use crate::proc::{exe, parse, spawn, value_name, Line, Msg};
use crashlab_fuzz::outcome::{Failure, FailureKind};
use crashlab_fuzz::spec::Saved;
use crashlab_fuzz::storage::Control;
use crashlab_fuzz::worker::Report;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::mpsc::{channel, RecvTimeoutError};
use std::time::{Duration, Instant};

/// Replay saved inputs, one worker each; exit 1 when any fails, and 2, replaying none, when a
/// file is not a saved input (bad input, not a failure of what it would have replayed).
pub fn replay(
    files: &[PathBuf],
    timeout: Duration,
    control: Control,
    fixtures: &Path,
    json: bool,
) -> ExitCode {
    let refused: Vec<String> = files.iter().filter_map(|f| Saved::load(f).err()).collect();
    if !refused.is_empty() {
        for why in refused {
            eprintln!("crashlab-fuzz replay: {why}");
        }
        return ExitCode::from(2);
    }
    let exe = exe();
    let mut failed = 0;
    for file in files {
        let outcome = replay_one(&exe, file, timeout, control, fixtures);
        match &outcome {
            Ok(r) => {
                if json {
                    println!("{}", serde_json::to_string(r).expect("serialises"));
                }
                match &r.outcome.failure {
                    None => println!("{}: ok", file.display()),
                    Some(f) => {
                        failed += 1;
                        println!(
                            "{}: FAIL {} in {}: {}",
                            file.display(),
                            f.kind.name(),
                            f.stage,
                            f.detail
                        );
                    }
                }
            }
            Err(f) => {
                failed += 1;
                println!(
                    "{}: FAIL {} in {}: {}",
                    file.display(),
                    f.kind.name(),
                    f.stage,
                    f.detail
                );
            }
        }
    }
    if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

/// The report of one saved input, or how its worker died.
fn replay_one(
    exe: &Path,
    file: &Path,
    timeout: Duration,
    control: Control,
    fixtures: &Path,
) -> Result<Report, Failure> {
    let args = vec![
        "worker".to_owned(),
        format!("--saved={}", file.display()),
        format!("--control={}", value_name(&control)),
        format!("--fixtures={}", fixtures.display()),
    ];
    let (tx, rx) = channel();
    let mut w = spawn(exe, &args, 0, &tx)
        .map_err(|e| Failure::new(FailureKind::Crash, "replay", e.to_string()))?;
    let started = Instant::now();
    loop {
        match rx.recv_timeout(Duration::from_millis(200)) {
            Ok(Msg::Line(_, line)) => match parse(&line) {
                Some(Line::Begin(i)) => w.start(i),
                Some(Line::End(r)) => {
                    let _ = w.child.wait();
                    return Ok(*r);
                }
                None => {}
            },
            Ok(Msg::Eof(_)) | Err(RecvTimeoutError::Disconnected) => {
                let status = w.child.wait().ok();
                if w.current.is_none() {
                    let why = format!("the worker stopped: {}", w.stderr_text());
                    return Err(Failure::new(FailureKind::Crash, "replay", why));
                }
                return Err(w.death(status, timeout));
            }
            Err(RecvTimeoutError::Timeout) => {}
        }
        if started.elapsed() > timeout && !w.killed_for_timeout {
            w.killed_for_timeout = true;
            let _ = w.child.kill();
        }
    }
}

/// The failure kind `saved` replays to (`None`: it passes), and its failure.
fn judge(saved: &Saved, scratch: &Path, timeout: Duration, fixtures: &Path) -> Option<Failure> {
    let text = serde_json::to_string(saved).expect("a saved input serialises");
    std::fs::write(scratch, text).expect("the scratch file is writable");
    match replay_one(&exe(), scratch, timeout, Control::None, fixtures) {
        Ok(r) => r.outcome.failure,
        Err(f) => Some(f),
    }
}

/// Shrink a saved failure: drop whole edits, then single operations, then writes, keeping each
/// removal after which the input still fails with the same kind. Writes `out`.
pub fn minimize(file: &Path, out: &Path, timeout: Duration, fixtures: &Path) -> ExitCode {
    let mut best = match Saved::load(file) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    let scratch =
        std::env::temp_dir().join(format!("crashlab-fuzz-min-{}.json", std::process::id()));
    let Some(failure) = judge(&best, &scratch, timeout, fixtures) else {
        eprintln!("{}: replays clean; nothing to minimise", file.display());
        return ExitCode::from(2);
    };
    let kind = failure.kind;
    best.failure = Some(failure);
    let mut tries = 0;
    let mut keep_if_same = |cand: Saved, best: &mut Saved| {
        tries += 1;
        match judge(&cand, &scratch, timeout, fixtures) {
            Some(f) if f.kind == kind => {
                *best = Saved {
                    failure: Some(f),
                    ..cand
                };
                true
            }
            _ => false,
        }
    };
    for i in (0..best.spec.edits.len()).rev() {
        let mut cand = best.clone();
        cand.spec.edits.remove(i);
        keep_if_same(cand, &mut best);
    }
    for i in (0..best.spec.edits.len()).rev() {
        for j in (0..best.spec.edits[i].ops.len()).rev() {
            if best.spec.edits[i].ops.len() > 1 {
                let mut cand = best.clone();
                cand.spec.edits[i].ops.remove(j);
                keep_if_same(cand, &mut best);
            }
        }
    }
    if best.spec.config.writes.is_none() && best.spec.config.commits > 1 {
        let mut cand = best.clone();
        cand.spec.config.commits = 1;
        keep_if_same(cand, &mut best);
    }
    let _ = std::fs::remove_file(&scratch);
    best.note = format!(
        "minimised from {} ({tries} tries). {}",
        file.display(),
        best.note
    );
    let text = serde_json::to_string_pretty(&best).expect("a saved input serialises");
    if let Err(e) = std::fs::write(out, text + "\n") {
        eprintln!("{}: {e}", out.display());
        return ExitCode::from(2);
    }
    let f = best.failure.as_ref().expect("kept failing");
    println!(
        "{}: {} edits, still {} in {}: {}",
        out.display(),
        best.spec.edits.len(),
        f.kind.name(),
        f.stage,
        f.detail
    );
    ExitCode::SUCCESS
}
