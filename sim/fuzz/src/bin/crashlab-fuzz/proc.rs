//! Worker processes as the parent sees them: started with the worker subcommand, their stdout
//! read line by line on a thread, the start of their stderr kept, and the reason they died.

use crashlab_fuzz::outcome::{Failure, FailureKind};
use crashlab_fuzz::worker::Report;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc::Sender;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Bytes of a worker's stderr kept for the failure report: its start, where the reason and
/// the innermost frames of a backtrace are.
const STDERR_HEAD: usize = 64 << 10;

pub enum Msg {
    Line(usize, String),
    Eof(usize),
}

/// One worker process and what it is doing.
pub struct Worker {
    pub child: Child,
    stderr: Arc<Mutex<Vec<u8>>>,
    /// The input it is running, and since when.
    pub current: Option<(u64, Instant)>,
    pub killed_for_timeout: bool,
}

pub fn spawn(exe: &Path, args: &[String], job: usize, tx: &Sender<Msg>) -> std::io::Result<Worker> {
    let mut child = Command::new(exe)
        .args(args)
        // A worker that aborts prints where: the failure report quotes the engine's frames.
        .env("RUST_BACKTRACE", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()?;
    let stdout = child.stdout.take().expect("piped");
    let tx = tx.clone();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if tx.send(Msg::Line(job, line)).is_err() {
                return;
            }
        }
        let _ = tx.send(Msg::Eof(job));
    });
    let stderr = Arc::new(Mutex::new(Vec::new()));
    let head = stderr.clone();
    let mut pipe = child.stderr.take().expect("piped");
    std::thread::spawn(move || {
        let mut buf = [0u8; 1024];
        while let Ok(n) = pipe.read(&mut buf) {
            if n == 0 {
                break;
            }
            let mut t = head.lock().unwrap_or_else(|e| e.into_inner());
            let room = STDERR_HEAD.saturating_sub(t.len()).min(n);
            t.extend_from_slice(&buf[..room]);
        }
    });
    Ok(Worker {
        child,
        stderr,
        current: None,
        killed_for_timeout: false,
    })
}

impl Worker {
    /// Input `i` started (its clock keeps running from its `draw` line to its `end`).
    pub fn start(&mut self, i: u64) {
        if self.current.is_none_or(|(c, _)| c != i) {
            self.current = Some((i, Instant::now()));
        }
    }

    pub fn stderr_text(&self) -> String {
        let t = self.stderr.lock().unwrap_or_else(|e| e.into_inner());
        String::from_utf8_lossy(&t).trim().to_owned()
    }

    /// Why the worker died while running an input.
    pub fn death(&mut self, status: Option<ExitStatus>, timeout: Duration) -> Failure {
        // The stderr reader may still be draining the last bytes.
        std::thread::sleep(Duration::from_millis(50));
        let stderr = self.stderr_text();
        let status = status.map_or("unknown status".to_owned(), |s| s.to_string());
        if self.killed_for_timeout {
            let detail = format!("no result within {} s; worker killed", timeout.as_secs());
            return Failure::new(FailureKind::Timeout, "worker", detail);
        }
        let frames = engine_frames(&stderr);
        if let Some(line) = stderr.lines().find(|l| l.contains("memory allocation of")) {
            let detail = format!("{line} ({status}){frames}");
            return Failure::new(FailureKind::MemoryCap, "worker", detail);
        }
        let first = stderr
            .lines()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("no message");
        Failure::new(
            FailureKind::Crash,
            "worker",
            format!("{status}: {first}{frames}"),
        )
    }
}

/// The innermost engine functions of a backtrace on stderr, as `; at a <- b <- c`.
fn engine_frames(stderr: &str) -> String {
    let frames: Vec<&str> = stderr
        .lines()
        .filter_map(|l| l.split_once(": ").map(|(_, f)| f.trim()))
        .filter(|f| f.starts_with("crashlab_engine::"))
        .map(|f| f.trim_start_matches("crashlab_engine::"))
        .take(3)
        .collect();
    if frames.is_empty() {
        String::new()
    } else {
        format!("; at {}", frames.join(" <- "))
    }
}

/// A worker line: `draw <index>` or `begin <index>` (both start an input's clock: a worker
/// that dies while drawing an input is charged with it), or `end <report>`.
pub enum Line {
    Begin(u64),
    End(Box<Report>),
}

pub fn parse(line: &str) -> Option<Line> {
    for prefix in ["draw ", "begin "] {
        if let Some(i) = line.strip_prefix(prefix) {
            return i.trim().parse().ok().map(Line::Begin);
        }
    }
    let report = line.strip_prefix("end ")?;
    serde_json::from_str(report)
        .ok()
        .map(|r| Line::End(Box::new(r)))
}

pub fn exe() -> PathBuf {
    std::env::current_exe().expect("the path of this binary")
}

/// clap's name for a value (`small`, `panic-on-write`).
pub fn value_name<T: clap::ValueEnum>(v: &T) -> String {
    v.to_possible_value()
        .map(|p| p.get_name().to_owned())
        .expect("every value has a name")
}
