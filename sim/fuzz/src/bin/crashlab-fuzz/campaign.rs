//! The parent side of a campaign: the workers, the watchdog, the summary, saving failures.

use crate::proc::{exe, parse, spawn, value_name, Line, Msg, Worker};
use crashlab_fuzz::bases::BasePool;
use crashlab_fuzz::outcome::Failure;
use crashlab_fuzz::plan::PlanText;
use crashlab_fuzz::spec::{Draw, Saved, Spec};
use crashlab_fuzz::storage::Control;
use crashlab_fuzz::summary::{FailureClass, Summary, SAVED_PER_CLASS};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError, Sender};
use std::time::{Duration, Instant};
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

/// How long inputs took (wall clock: for tuning, never part of the summary): the slowest, and
/// counts and time per order of magnitude.
#[derive(Default)]
struct Slowest {
    top: Vec<(Duration, u64)>,
    /// Inputs and seconds taking up to 10 ms, 100 ms, 1 s, 10 s, and longer.
    bands: [(u64, f64); 5],
}

impl Slowest {
    const KEEP: usize = 5;
    const BANDS: [&str; 5] = ["<=10 ms", "<=100 ms", "<=1 s", "<=10 s", ">10 s"];

    fn add(&mut self, took: Duration, index: u64) {
        self.top.push((took, index));
        self.top.sort_by(|a, b| b.cmp(a));
        self.top.truncate(Self::KEEP);
        let secs = took.as_secs_f64();
        let band = [0.01, 0.1, 1.0, 10.0]
            .iter()
            .position(|&limit| secs <= limit)
            .unwrap_or(4);
        self.bands[band].0 += 1;
        self.bands[band].1 += secs;
    }

    fn text(&self) -> String {
        let top: Vec<String> = self
            .top
            .iter()
            .map(|(d, i)| format!("input {i} {:.2} s", d.as_secs_f64()))
            .collect();
        let bands: Vec<String> = Self::BANDS
            .iter()
            .zip(self.bands)
            .map(|(name, (n, secs))| format!("{name}: {n} ({secs:.1} s)"))
            .collect();
        format!(
            "slowest: {}\ntime per input: {}",
            top.join(", "),
            bands.join(", ")
        )
    }
}

/// What one step of the parent's loop updates.
struct State<'a> {
    workers: &'a mut Vec<Option<Worker>>,
    summary: &'a mut Summary,
    pool: &'a mut BasePool,
    slowest: &'a mut Slowest,
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
                let Some((index, since)) = w.current else {
                    if status.is_some_and(|s| s.success()) {
                        return Ok(());
                    }
                    return Err(format!("worker {job} failed: {}", w.stderr_text()));
                };
                slowest.add(since.elapsed(), index);
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
            // The worker died on this input, maybe while drawing it: a harness bug there must
            // not take the campaign down with it.
            None => match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                self.draw.input(index, pool)
            })) {
                Ok(Ok((s, _))) => s,
                Ok(Err(e)) => return eprintln!("crashlab-fuzz: cannot redraw input {index}: {e}"),
                Err(_) => return eprintln!("crashlab-fuzz: drawing input {index} panics"),
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
