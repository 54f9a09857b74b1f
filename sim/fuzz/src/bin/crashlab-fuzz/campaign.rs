//! The parent side: worker processes, the watchdog, the summary, saving failures.

use crashlab_fuzz::bases::BasePool;
use crashlab_fuzz::outcome::{Failure, FailureKind};
use crashlab_fuzz::plan::PlanText;
use crashlab_fuzz::spec::{Draw, Saved, Spec};
use crashlab_fuzz::storage::Control;
use crashlab_fuzz::summary::{FailureClass, Summary, SAVED_PER_CLASS};
use crashlab_fuzz::worker::Report;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitCode, ExitStatus, Stdio};
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Bytes of a worker's stderr kept for the failure report: its start, where the reason and
/// the innermost frames of a backtrace are.
const STDERR_HEAD: usize = 64 << 10;
/// A saved input's file image is written next to it when it is at most this long.
const IMAGE_SAVE_MAX: u64 = 16 << 20;

pub struct Campaign {
    pub draw: Draw,
    pub inputs: Option<u64>,
    pub seconds: Option<u64>,
    pub jobs: u64,
    pub save: PathBuf,
    pub timeout: Duration,
    pub control: Control,
    pub fixtures: PathBuf,
    pub json: bool,
}

/// The slowest inputs of a run (wall clock: for tuning, never part of the summary).
#[derive(Default)]
struct Slowest(Vec<(Duration, u64)>);

impl Slowest {
    const KEEP: usize = 5;

    fn add(&mut self, took: Duration, index: u64) {
        self.0.push((took, index));
        self.0.sort_by(|a, b| b.cmp(a));
        self.0.truncate(Self::KEEP);
    }

    fn text(&self) -> String {
        let items: Vec<String> = self
            .0
            .iter()
            .map(|(d, i)| format!("input {i} {:.2} s", d.as_secs_f64()))
            .collect();
        format!("slowest: {}", items.join(", "))
    }
}

enum Msg {
    Line(usize, String),
    Eof(usize),
}

/// What one step of the parent's loop updates.
struct State<'a> {
    workers: &'a mut Vec<Option<Worker>>,
    summary: &'a mut Summary,
    pool: &'a mut BasePool,
    slowest: &'a mut Slowest,
}

/// One worker process and what it is doing.
struct Worker {
    child: Child,
    stderr: Arc<Mutex<Vec<u8>>>,
    /// The input it is running, and since when.
    current: Option<(u64, Instant)>,
    killed_for_timeout: bool,
}

fn spawn(exe: &Path, args: &[String], job: usize, tx: &Sender<Msg>) -> std::io::Result<Worker> {
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
    fn start(&mut self, i: u64) {
        if self.current.is_none_or(|(c, _)| c != i) {
            self.current = Some((i, Instant::now()));
        }
    }

    fn stderr_text(&self) -> String {
        let t = self.stderr.lock().unwrap_or_else(|e| e.into_inner());
        String::from_utf8_lossy(&t).trim().to_owned()
    }

    /// Why the worker died while running an input.
    fn death(&mut self, status: Option<ExitStatus>, timeout: Duration) -> Failure {
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
enum Line {
    Begin(u64),
    End(Box<Report>),
}

fn parse(line: &str) -> Option<Line> {
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

fn exe() -> PathBuf {
    std::env::current_exe().expect("the path of this binary")
}

impl Campaign {
    fn worker_args(&self, start: u64) -> Vec<String> {
        let mut args = vec![
            "worker".to_owned(),
            format!("--seed={}", self.draw.seed),
            format!("--start={start}"),
            format!("--step={}", self.jobs),
            format!("--bases={}", value_name(&self.draw.bases)),
            format!("--max-mutations={}", self.draw.max_mutations),
            format!("--control={}", value_name(&self.control)),
            format!("--fixtures={}", self.fixtures.display()),
            format!("--cache={}", self.cache_dir().display()),
        ];
        if let Some(n) = self.inputs {
            args.push(format!("--end={n}"));
        }
        args
    }

    /// This campaign's own directory for generated bases (removed at the end).
    fn cache_dir(&self) -> PathBuf {
        std::env::temp_dir().join(format!("crashlab-fuzz-bases-{}", std::process::id()))
    }

    pub fn run(&self) -> ExitCode {
        let started = Instant::now();
        let _ = std::fs::create_dir_all(self.cache_dir());
        let mut slowest = Slowest::default();
        let summary = match self.drive(started, &mut slowest) {
            Ok(s) => s,
            Err(e) => {
                eprintln!("crashlab-fuzz: {e}");
                return ExitCode::from(2);
            }
        };
        let _ = std::fs::remove_dir_all(self.cache_dir());
        let secs = started.elapsed().as_secs_f64();
        let rate = summary.inputs as f64 / secs.max(1e-9);
        if self.json {
            println!(
                "{}",
                serde_json::to_string_pretty(&summary).expect("a summary serialises")
            );
        } else {
            println!(
                "crashlab-fuzz: seed {}, {} inputs in {secs:.1} s ({rate:.0} inputs/s, {} jobs)",
                summary.seed, summary.inputs, self.jobs
            );
            print!("{}", summary.text());
            println!("{}", slowest.text());
        }
        eprintln!(
            "crashlab-fuzz: {} inputs, {rate:.0} inputs/s, {} failures",
            summary.inputs,
            summary.failures()
        );
        if summary.failures() == 0 {
            ExitCode::SUCCESS
        } else {
            ExitCode::from(1)
        }
    }

    fn drive(&self, started: Instant, slowest: &mut Slowest) -> Result<Summary, String> {
        std::fs::create_dir_all(&self.save).map_err(|e| format!("{}: {e}", self.save.display()))?;
        let (tx, rx) = channel();
        let exe = exe();
        let mut workers: Vec<Option<Worker>> = Vec::new();
        for job in 0..self.jobs {
            let w = spawn(&exe, &self.worker_args(job), job as usize, &tx)
                .map_err(|e| e.to_string())?;
            workers.push(Some(w));
        }
        let mut summary = Summary::new(self.draw.seed);
        let mut pool = BasePool::new(self.fixtures.clone()).with_disk_cache(self.cache_dir());
        let mut last_progress = Instant::now();
        let deadline = self.seconds.map(Duration::from_secs);
        while workers.iter().any(Option::is_some) {
            if deadline.is_some_and(|d| started.elapsed() >= d) {
                for w in workers.iter_mut().flatten() {
                    let _ = w.child.kill();
                    let _ = w.child.wait();
                }
                break;
            }
            let mut state = State {
                workers: &mut workers,
                summary: &mut summary,
                pool: &mut pool,
                slowest,
            };
            self.step(&rx, &tx, &exe, &mut state)?;
            self.watchdog(&mut workers);
            if last_progress.elapsed() >= Duration::from_secs(10) {
                last_progress = Instant::now();
                let rate = summary.inputs as f64 / started.elapsed().as_secs_f64();
                eprintln!(
                    "crashlab-fuzz: {} inputs, {rate:.0} inputs/s, {} failures",
                    summary.inputs,
                    summary.failures()
                );
            }
        }
        Ok(summary)
    }

    /// Handle one message from a worker (or none within a moment).
    fn step(
        &self,
        rx: &Receiver<Msg>,
        tx: &Sender<Msg>,
        exe: &Path,
        state: &mut State<'_>,
    ) -> Result<(), String> {
        let State {
            workers,
            summary,
            pool,
            slowest,
        } = state;
        let msg = match rx.recv_timeout(Duration::from_millis(200)) {
            Ok(m) => m,
            Err(RecvTimeoutError::Timeout) => return Ok(()),
            Err(RecvTimeoutError::Disconnected) => return Err("workers vanished".into()),
        };
        match msg {
            Msg::Line(job, line) => {
                let Some(w) = workers[job].as_mut() else {
                    return Ok(());
                };
                match parse(&line) {
                    Some(Line::Begin(i)) => w.start(i),
                    Some(Line::End(report)) => {
                        if let Some((i, since)) = w.current.take() {
                            slowest.add(since.elapsed(), i);
                        }
                        let spec = report.spec.clone();
                        let failure = report.outcome.failure.clone();
                        let writes = report.outcome.writes.clone();
                        if let Some(class) = summary.add(&report) {
                            let f = failure.expect("a class means a failure");
                            self.save(class, (report.index, &f, writes), spec, pool);
                        }
                    }
                    None => return Err(format!("worker {job}: unexpected line {line:?}")),
                }
            }
            Msg::Eof(job) => {
                let Some(mut w) = workers[job].take() else {
                    return Ok(());
                };
                let status = w.child.wait().ok();
                let Some((index, _)) = w.current else {
                    if status.is_some_and(|s| s.success()) {
                        return Ok(());
                    }
                    return Err(format!("worker {job} failed: {}", w.stderr_text()));
                };
                let failure = w.death(status, self.timeout);
                let class = summary.add_lost(index, &failure);
                self.save(class, (index, &failure, Vec::new()), None, pool);
                let next = index + self.jobs;
                if self.inputs.is_none_or(|n| next < n) {
                    let w =
                        spawn(exe, &self.worker_args(next), job, tx).map_err(|e| e.to_string())?;
                    workers[job] = Some(w);
                }
            }
        }
        Ok(())
    }

    /// Kill workers whose input passed the deadline (their end of output follows).
    fn watchdog(&self, workers: &mut [Option<Worker>]) {
        for w in workers.iter_mut().flatten() {
            if let Some((_, since)) = w.current {
                if since.elapsed() > self.timeout && !w.killed_for_timeout {
                    w.killed_for_timeout = true;
                    let _ = w.child.kill();
                }
            }
        }
    }

    /// Save a failing input (a few per class) as JSON, and its file image when it is small.
    fn save(
        &self,
        class: &mut FailureClass,
        (index, failure, writes): (u64, &Failure, Vec<PlanText>),
        spec: Option<Spec>,
        pool: &mut BasePool,
    ) {
        if class.saved.len() >= SAVED_PER_CLASS {
            return;
        }
        let spec = match spec {
            Some(s) => s,
            None => match self.draw.input(index, pool) {
                Ok((s, _)) => s,
                Err(e) => return eprintln!("crashlab-fuzz: cannot redraw input {index}: {e}"),
            },
        };
        let stem = self.save.join(format!("s{}-i{index}", self.draw.seed));
        let path = stem.with_extension("json");
        if let Ok(image) = spec.image(pool) {
            if let Some(bytes) = image.to_vec(IMAGE_SAVE_MAX) {
                let _ = std::fs::write(stem.with_extension("db"), bytes);
            }
        }
        let saved = Saved {
            seed: self.draw.seed,
            index,
            note: String::new(),
            failure: Some(failure.clone()),
            writes,
            spec,
        };
        let text = serde_json::to_string_pretty(&saved).expect("a saved input serialises");
        match std::fs::write(&path, text) {
            Ok(()) => class.saved.push(path.display().to_string()),
            Err(e) => eprintln!("crashlab-fuzz: {}: {e}", path.display()),
        }
    }
}

/// clap's name for a value (`small`, `panic-on-write`).
fn value_name<T: clap::ValueEnum>(v: &T) -> String {
    v.to_possible_value()
        .map(|p| p.get_name().to_owned())
        .expect("every value has a name")
}

/// Replay saved inputs, one worker each; exit 1 when any fails.
pub fn replay(
    files: &[PathBuf],
    timeout: Duration,
    control: Control,
    fixtures: &Path,
    json: bool,
) -> ExitCode {
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
