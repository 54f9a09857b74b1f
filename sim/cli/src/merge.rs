//! `crashlab merge A.jsonl B.jsonl … --out merged.jsonl`: the shards of one sweep joined into
//! the report the unsharded sweep writes, and its summary.
//!
//! The reports must come from one binary sweeping one range (their headers agree in everything
//! but the shard). Their seed lines are merged in seed order as they stream (each report's seeds
//! ascend), so memory does not grow with the sweep. Every seed of the range must be present:
//! a missing one (a shard that did not finish, or was not passed) is refused, and so is a seed
//! whose lines differ between reports (the same binary gave two answers for one seed, or a file
//! was edited). The same line twice (a report passed twice, overlapping shards) is kept once,
//! with a note. On any refusal nothing is written and the exit code is 2; otherwise the merged
//! header says shard `[0, 1]`, so the output is byte-identical whatever the number of shards,
//! and the exit code is 1 when a seed had a violation, as explore's is.

use crate::bad_input;
use crate::report::{Header, Reader, SeedLine, Writer};
use crashlab_sim::saturation::Saturation;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct MergeArgs {
    /// The reports to merge (`explore --report`), one per shard, in any order.
    #[arg(required = true)]
    files: Vec<PathBuf>,
    /// Where to write the merged report.
    #[arg(long)]
    out: PathBuf,
    /// Also plot the merged sweep's saturation curve as an SVG chart here.
    #[arg(long)]
    saturation_svg: Option<PathBuf>,
    /// A deliberate bug (`drop-seed`: lose the first seed line of the last report), the
    /// negative control of the check for missing seeds.
    #[arg(long, hide = true, value_parser = ["drop-seed"])]
    debug_control: Option<String>,
}

/// Ranges of missing seeds listed in a refusal, at most.
const MISSING_LISTED_MAX: usize = 10;
/// Duplicate seeds noted one by one, at most (then a count).
const DUPLICATES_NOTED_MAX: usize = 10;

pub fn run(args: MergeArgs) -> ExitCode {
    let partial = partial_path(&args.out);
    let drop_seed = args.debug_control.is_some();
    let merged = match merge(&args.files, &partial, drop_seed) {
        Ok(m) => m,
        Err(m) => {
            let _ = std::fs::remove_file(&partial);
            return bad_input(m);
        }
    };
    if let Err(e) = std::fs::rename(&partial, &args.out) {
        let _ = std::fs::remove_file(&partial);
        return bad_input(format!("cannot write {}: {e}", args.out.display()));
    }
    eprintln!(
        "read {} reports · wrote {}",
        args.files.len(),
        args.out.display()
    );
    print!("{}", merged.text());
    if let Some(svg) = &args.saturation_svg {
        if let Err(m) = crate::saturation_svg::write(&merged.saturation, svg) {
            return bad_input(m);
        }
    }
    if merged.violations > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

/// The merged report is written beside `out`, then renamed over it once it is whole.
fn partial_path(out: &Path) -> PathBuf {
    let mut name = out.file_name().unwrap_or_default().to_os_string();
    name.push(".partial");
    out.with_file_name(name)
}

/// What a merged sweep found.
#[derive(Default)]
struct Merged {
    header: Option<Header>,
    seeds: u64,
    ok: u64,
    violations: u64,
    disk_failures: u64,
    ops: u64,
    commits: u64,
    failed_commits: u64,
    power_cuts: u64,
    reopens: u64,
    io_errors: u64,
    faults: u64,
    sim_ns: u64,
    /// Violating seeds: the seed, what was found and the case saved.
    failures: Vec<(u64, String, Option<String>)>,
    saturation: Saturation,
}

impl Merged {
    fn add(&mut self, l: &SeedLine) {
        self.seeds += 1;
        match l.outcome.as_str() {
            "ok" => self.ok += 1,
            "violation" => {
                self.violations += 1;
                let detail = l.detail.clone().unwrap_or_default();
                self.failures.push((l.seed, detail, l.case.clone()));
            }
            _ => self.disk_failures += 1,
        }
        self.ops += l.ops;
        self.commits += l.commits;
        self.failed_commits += l.failed_commits;
        self.power_cuts += l.power_cuts;
        self.reopens += l.reopens;
        self.io_errors += l.io_errors;
        self.faults += l.faults;
        self.sim_ns += l.sim_ns;
        self.saturation.add(&l.signature_value());
    }

    /// The summary: a function of the merged lines alone, so the same for any sharding.
    fn text(&self) -> String {
        let h = self.header.as_ref().expect("a merge has a header");
        let mut s = format!(
            "merged seeds {}..{} ({} seeds) profile {} ops {} engine {} · crashlab {} commit {} binary {}\n",
            h.seeds[0], h.seeds[1], h.range_len(), h.profile, h.ops, h.engine, h.version, h.commit,
            h.binary_xxh3
        );
        for (seed, detail, case) in &self.failures {
            let repro = case.as_deref().map_or("(no case saved)".to_string(), |c| {
                format!("crashlab repro {c}")
            });
            s += &format!("seed {seed}: {detail}\n  repro: {repro}\n");
        }
        s += &format!(
            "seeds {} · ok {} · violations {} · disk failures {}\n\
             ops {} · commits {} · failed {} · power cuts {} · reopens {} · I/O errors {} · faults {} · simulated {:.3} s\n{}\n",
            self.seeds, self.ok, self.violations, self.disk_failures, self.ops, self.commits,
            self.failed_commits, self.power_cuts, self.reopens, self.io_errors, self.faults,
            self.sim_ns as f64 / 1e9, self.saturation.line()
        );
        s
    }
}

/// One input report: its reader, its shard and the line it holds next.
struct Input {
    reader: Reader,
    shard: [u64; 2],
    next: Option<SeedLine>,
    /// The line number of `next`, for messages.
    at: String,
}

impl Input {
    /// Read the next line, checking that the seeds ascend and belong to the report's shard.
    fn advance(&mut self, h: &Header) -> Result<(), String> {
        let previous = self.next.as_ref().map(|l| l.seed);
        self.next = self.reader.next_seed()?;
        self.at = self.reader.position();
        let Some(l) = &self.next else { return Ok(()) };
        let [start, end] = h.seeds;
        let [i, n] = self.shard;
        if l.seed < start || l.seed >= end {
            return Err(self.reader.at(format!(
                "seed {} is outside the sweep's range {start}..{end}",
                l.seed
            )));
        }
        if (l.seed - start) % n != i {
            return Err(self.reader.at(format!(
                "seed {} is not in the report's shard {i}/{n}",
                l.seed
            )));
        }
        if previous.is_some_and(|p| p >= l.seed) {
            return Err(self.reader.at(format!(
                "seed {} after seed {}: a report's seeds ascend",
                l.seed,
                previous.unwrap_or_default()
            )));
        }
        Ok(())
    }
}

/// Merge `files` into `partial`; `drop_seed` is the negative control.
fn merge(files: &[PathBuf], partial: &Path, mut drop_seed: bool) -> Result<Merged, String> {
    let (mut inputs, header) = open_all(files)?;
    let mut merged_header = header.clone();
    merged_header.shard = [0, 1];
    let mut out = Writer::create(partial, &merged_header)?;
    let mut heap = BinaryHeap::new();
    for (k, input) in inputs.iter_mut().enumerate() {
        input.advance(&header)?;
        if let Some(l) = &input.next {
            heap.push(Reverse((l.seed, k)));
        }
    }
    let mut m = Merged {
        header: Some(merged_header),
        ..Merged::default()
    };
    let mut gaps = Gaps::new(header.seeds[0]);
    let mut duplicates = 0u64;
    while let Some(Reverse((seed, k))) = heap.pop() {
        let line = inputs[k].next.take().expect("a queued input holds a line");
        let first_at = inputs[k].at.clone();
        refill(&mut inputs[k], k, &header, &mut heap)?;
        while let Some(&Reverse((s, j))) = heap.peek() {
            if s != seed {
                break;
            }
            heap.pop();
            let other = inputs[j].next.take().expect("a queued input holds a line");
            if other != line {
                return Err(format!(
                    "seed {seed} differs between {first_at} and {}: one binary gave two \
                     answers for one seed, or a report was edited",
                    inputs[j].at
                ));
            }
            duplicates += 1;
            if duplicates <= DUPLICATES_NOTED_MAX as u64 {
                eprintln!(
                    "note: seed {seed} is at {first_at} and {} (identical): kept once",
                    inputs[j].at
                );
            }
            refill(&mut inputs[j], j, &header, &mut heap)?;
        }
        if drop_seed && k + 1 == inputs.len() {
            drop_seed = false;
            continue;
        }
        gaps.saw(seed);
        m.add(&line);
        out.line(&line);
    }
    if duplicates > DUPLICATES_NOTED_MAX as u64 {
        eprintln!("note: {duplicates} duplicate seeds in all, each kept once");
    }
    gaps.saw_end(header.seeds[1]);
    if gaps.missing > 0 {
        let shards: Vec<[u64; 2]> = inputs.iter().map(|i| i.shard).collect();
        return Err(gaps.refusal(&header, &shards));
    }
    out.finish()?;
    Ok(m)
}

fn refill(
    input: &mut Input,
    k: usize,
    h: &Header,
    heap: &mut BinaryHeap<Reverse<(u64, usize)>>,
) -> Result<(), String> {
    input.advance(h)?;
    if let Some(l) = &input.next {
        heap.push(Reverse((l.seed, k)));
    }
    Ok(())
}

/// Open every report and check that their headers agree in everything but the shard.
fn open_all(files: &[PathBuf]) -> Result<(Vec<Input>, Header), String> {
    let mut inputs = Vec::new();
    let mut first: Option<(Header, &Path)> = None;
    for f in files {
        let (reader, h) = Reader::open(f)?;
        let [i, n] = h.shard;
        if n == 0 || i >= n {
            return Err(format!(
                "{}:1: shard {i}/{n} is not i/n with i < n",
                f.display()
            ));
        }
        if let Some((first, first_file)) = &first {
            if let Some(why) = disagreement(first, &h) {
                return Err(format!(
                    "{}:1: its header differs from {}'s in {why}: these reports are not shards \
                     of one sweep by one binary",
                    f.display(),
                    first_file.display()
                ));
            }
        } else {
            first = Some((h.clone(), f));
        }
        inputs.push(Input {
            reader,
            shard: h.shard,
            next: None,
            at: String::new(),
        });
    }
    let (header, _) = first.expect("clap requires a file");
    Ok((inputs, header))
}

/// The first header field, other than the shard, in which `a` and `b` differ, with both values.
fn disagreement(a: &Header, b: &Header) -> Option<String> {
    let (a, b) = (
        serde_json::to_value(a).expect("headers serialize"),
        serde_json::to_value(b).expect("headers serialize"),
    );
    let (a, b) = (a.as_object()?, b.as_object()?);
    a.iter()
        .filter(|(k, _)| k.as_str() != "shard")
        .find(|(k, v)| b.get(k.as_str()) != Some(v))
        .map(|(k, v)| {
            format!(
                "{k}: {v} against {}",
                b.get(k.as_str()).unwrap_or(&serde_json::Value::Null)
            )
        })
}

/// The seeds of the range that no report holds.
struct Gaps {
    expected: u64,
    missing: u64,
    /// The first `MISSING_LISTED_MAX` missing ranges, and how many there are in all.
    ranges: Vec<(u64, u64)>,
    range_count: u64,
}

impl Gaps {
    fn new(start: u64) -> Gaps {
        Gaps {
            expected: start,
            missing: 0,
            ranges: Vec::new(),
            range_count: 0,
        }
    }

    fn saw(&mut self, seed: u64) {
        self.saw_end(seed);
        self.expected = seed + 1;
    }

    /// Seeds from the expected one up to `end` (excluded) are missing.
    fn saw_end(&mut self, end: u64) {
        if end > self.expected {
            self.missing += end - self.expected;
            self.range_count += 1;
            if self.ranges.len() < MISSING_LISTED_MAX {
                self.ranges.push((self.expected, end));
            }
        }
    }

    fn refusal(&self, h: &Header, shards: &[[u64; 2]]) -> String {
        let mut listed: Vec<String> = self
            .ranges
            .iter()
            .map(|&(a, b)| {
                if b == a + 1 {
                    a.to_string()
                } else {
                    format!("{a}..{b}")
                }
            })
            .collect();
        if self.range_count > self.ranges.len() as u64 {
            listed.push("…".into());
        }
        let why = absent_shards(shards)
            .unwrap_or_else(|| "a shard did not finish, or its report was not given".into());
        format!(
            "{} of the {} seeds of {}..{} are in no report: {} ({why}); nothing written",
            self.missing,
            h.range_len(),
            h.seeds[0],
            h.seeds[1],
            listed.join(", ")
        )
    }
}

/// "no report of shard 2/8 was given", when every report is a shard of the same count.
fn absent_shards(shards: &[[u64; 2]]) -> Option<String> {
    let n = shards.first()?[1];
    if shards.iter().any(|s| s[1] != n) {
        return None;
    }
    let absent: Vec<String> = (0..n)
        .filter(|i| !shards.iter().any(|s| s[0] == *i))
        .take(MISSING_LISTED_MAX)
        .map(|i| format!("{i}/{n}"))
        .collect();
    match absent.len() {
        0 => None,
        1 => Some(format!("no report of shard {} was given", absent[0])),
        _ => Some(format!(
            "no report of shards {} was given",
            absent.join(", ")
        )),
    }
}
