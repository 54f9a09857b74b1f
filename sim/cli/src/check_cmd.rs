//! `crashlab check`: every crash state of a small workload (or of every workload of a bounded
//! space, `--all-workloads`), and the replay of one saved state.
//!
//! The wall clock is read here only, for the states/s figure; it never feeds the check.

use crate::cases::{print_expectation, with_case};
use crate::engines::WithEngine;
use crate::{bad_input, engine_or_exit};
use crashlab_check::{self as check, CheckConfig, CheckReport, Replayed};
use crashlab_sim::adapter::{Engine, EngineConfig};
use crashlab_sim::case::{parse_seed, Case, Expect};
use crashlab_sim::control::Control;
use crashlab_sim::disk::LengthModel;
use crashlab_sim::spec::{max_states_valid, sector_size_valid, CrashState};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

#[derive(clap::Args)]
pub struct CheckArgs {
    /// The case whose workload, options and check parameters to use (with --all-workloads:
    /// its options and parameters).
    #[arg(long, required_unless_present_any = ["seed", "all_workloads"], conflicts_with = "seed")]
    case: Option<PathBuf>,
    /// Generate the workload and the engine options from this seed instead.
    #[arg(long, value_parser = parse_seed)]
    seed: Option<u64>,
    /// Operations to generate with --seed, 1 to 1000 (CHECK_OPS_MAX).
    #[arg(long, default_value_t = 12, value_parser = crate::args::check_ops)]
    ops: usize,
    /// Most states per crash point before the checker samples, 2 to 2^20
    /// (STATES_PER_CRASH_POINT_MAX) [default: 4096].
    #[arg(long, value_parser = crate::args::max_states)]
    max_states: Option<u64>,
    /// The disk's sector (atomic write unit) in bytes, a power of two in [16, 4096]
    /// [default: a case's own, else 64, at which a meta can tear].
    #[arg(long, value_parser = crate::args::sector_size)]
    sector_size: Option<u32>,
    /// When the disk makes a length change durable: with-data (every sync) or own-barrier (only
    /// the sync right after a growing set_len) [default: a case's own, else drawn from --seed].
    #[arg(long)]
    length: Option<LengthModel>,
    /// Commit each transaction as one write batch (engines with write batches).
    #[arg(long)]
    batched: bool,
    /// A negative control: no-barrier, meta-same-slot, meta-unchecked, no-growth-sync,
    /// reuse-under-readers, batch-keeps-failed-call, no-latch, prev-skips-leaf-end,
    /// leak-freed-pages, emptied-bucket-leak, freelist-count-wraps, rebuild-drops-last-call,
    /// get-compares-16-bytes, full-batch-drops-last-call, batch-exceeds-limit,
    /// inline-keeps-sub-buckets, branch-frees-first-page, meta-checksum-skips-txid,
    /// sequence-skips-dirty, merge-keeps-branch-separator, inline-up-to-half-page,
    /// page-size-16-bits, refusal-does-not-latch, empty-leaf-ends-scan, put-over-bucket,
    /// delete-leaks-sub-buckets, delete-answers-existed, empty-leaf-ends-reverse-scan,
    /// key-limit-one-short, dropped-freelist-frees-first-page (or fdatasync-disk, the disk
    /// model of no-growth-sync without the bug).
    #[arg(long)]
    control: Option<Control>,
    /// Crash again during the recovery of one distinct state in N (0: never), N ≤ 2^20
    /// (RECRASH_ONE_IN_MAX) [default: 16; 0 with --from-image].
    #[arg(long, value_parser = crate::args::recrash_one_in)]
    recrash_one_in: Option<u64>,
    /// Check every variant of the engine's options (× batched or not).
    #[arg(long)]
    variants: bool,
    /// Stop at the first violating state instead of counting them all.
    #[arg(long)]
    stop_at_first: bool,
    /// Check every workload of 1 to --depth transactions over a small alphabet (two buckets,
    /// two keys, inline or overflow values, commit or rollback, a reader or not), × every
    /// variant of the engine's options × every crash state (docs/checker.md).
    #[arg(long, requires = "depth", conflicts_with_all = ["variants", "batched"])]
    all_workloads: bool,
    /// Most transactions per workload with --all-workloads, 1 to 8 (DEPTH_MAX).
    #[arg(long, requires = "all_workloads", value_parser = depth)]
    depth: Option<usize>,
    /// Most data operations per transaction with --all-workloads, 1 to 3 (TX_OPS_MAX)
    /// [default: 2].
    #[arg(long, requires = "all_workloads", value_parser = tx_ops)]
    tx_ops: Option<usize>,
    /// Check every schedule the coalescer allows for each group of concurrent callers in the
    /// workload (every combination across groups, each with every crash state), at most N
    /// combinations, 1 to 65,536 (INTERLEAVINGS_MAX); past N, a seeded sample of N.
    #[arg(long, conflicts_with_all = ["variants", "all_workloads"],
          value_parser = interleavings)]
    interleavings: Option<usize>,
    /// Worker threads that recover crash images, 1 to 1024 (JOBS_MAX) [default: the machine's
    /// cores]; the report is the same for any number.
    #[arg(long, value_parser = crate::args::jobs)]
    jobs: Option<usize>,
    /// Where to save a case for each violation.
    #[arg(long, default_value = "corpus/found")]
    found_dir: PathBuf,
    /// Write a self-contained HTML report of each minimal violating state into DIR (beside
    /// its saved case's name; docs/report.md).
    #[arg(long)]
    html_dir: Option<PathBuf>,
    /// The engine under test with --seed: crashlab, redb or sqlite (a case names its own engine).
    #[arg(long, conflicts_with = "case", value_parser = crate::engines::parse)]
    engine: Option<String>,
    /// Start the workload from a large image built first, where the format changes shape:
    /// escaped-freelist, deep-tree, many-buckets or long-overflow (512-byte pages; with --seed
    /// the options are drawn as under the scale profile) [--max-states default: 64]
    /// (docs/checker.md).
    #[arg(long, value_name = "SHAPE",
          conflicts_with_all = ["all_workloads", "variants", "interleavings"])]
    from_image: Option<check::Shape>,
}

pub fn run(args: CheckArgs) -> ExitCode {
    match args.case.clone() {
        Some(file) => with_case(&file, |text| Check {
            args,
            source: Source::Case(file.clone(), text),
        }),
        None => {
            let engine = args.engine.clone().unwrap_or_else(|| "crashlab".into());
            let seed = args.seed.unwrap_or_default();
            engine_or_exit(
                &engine,
                Check {
                    args,
                    source: Source::Seed(seed),
                },
            )
        }
    }
}

enum Source {
    Case(PathBuf, String),
    Seed(u64),
}

struct Check {
    args: CheckArgs,
    source: Source,
}

impl WithEngine for Check {
    type Output = ExitCode;
    fn call<E: Engine>(self) -> ExitCode {
        let base = match &self.source {
            Source::Case(file, text) => {
                match Case::<E::Config>::parse_for_check(text, &file.display().to_string()) {
                    Ok(case) => CheckConfig::from_case(&case),
                    Err(e) => return bad_input(e),
                }
            }
            Source::Seed(seed) => match self.args.from_image {
                Some(shape) => CheckConfig::from_seed_on_image(*seed, self.args.ops, shape),
                None => CheckConfig::from_seed(*seed, self.args.ops),
            },
        };
        let cfg = match configure(base, &self.args) {
            Ok(c) => c,
            Err(m) => return bad_input(m),
        };
        if cfg.engine.capabilities().directory {
            return run_dir::<E>(&cfg);
        }
        if self.args.all_workloads {
            return run_all_workloads::<E>(&cfg, &self.args);
        }
        if self.args.variants {
            return run_variants::<E>(&cfg);
        }
        if let Some(limit) = self.args.interleavings {
            return run_interleavings::<E>(&cfg, limit, &self.args);
        }
        if cfg.image.is_some() {
            return run_from_image::<E>(&cfg, &self.args, &self.source);
        }
        print!("{}", header(&cfg));
        let started = Instant::now();
        let report = check::check::<E>(&cfg);
        let wall_s = started.elapsed().as_secs_f64();
        print!("{}", report.text(Some(wall_s)));
        save_found(&cfg, &report, &self.args.found_dir);
        if let Some(dir) = &self.args.html_dir {
            html_found::<E>(&cfg, &report, &self.args.found_dir, dir);
        }
        if report.violating_states > 0 {
            ExitCode::from(1)
        } else {
            ExitCode::SUCCESS
        }
    }
}

/// An engine of several files: every crash state of the file system (`check_dir`), on the
/// metadata model the seed draws.
fn run_dir<E: Engine>(cfg: &CheckConfig<E::Config>) -> ExitCode {
    let fs = crashlab_sim::config::fs_config_from_seed(cfg.seed);
    // The length model the engine's syncs need, unless a control needs its own (as a run).
    let mut cfg = cfg.clone();
    if let (Some(length), None) = (cfg.engine.length_model(), cfg.params.control.length_model()) {
        cfg.params.length = length;
    }
    let cfg = &cfg;
    print!("{}", header(cfg));
    let report = check::check_dir::<E>(cfg, fs);
    print!("{}", report.text());
    if report.violating_states > 0 || report.live.is_some() {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

/// `base` with the command line's settings.
fn configure<C: EngineConfig>(
    mut cfg: CheckConfig<C>,
    o: &CheckArgs,
) -> Result<CheckConfig<C>, String> {
    cfg.image = cfg.image.or(o.from_image);
    if let Some(n) = o.max_states {
        cfg.params.max_states = max_states_valid(n)?;
    } else if cfg.image.is_some() {
        cfg.params.max_states = IMAGE_MAX_STATES_DEFAULT;
    }
    if let Some(ss) = o.sector_size {
        cfg.params.sector_size = sector_size_valid(ss)?;
    }
    cfg.params.batched |= o.batched;
    if let Some(c) = o.control {
        cfg.params = cfg.params.with_control(c);
    }
    // After the control, so that asking for a disk the control cannot run on is refused below.
    if let Some(length) = o.length {
        cfg.params.length = length;
    }
    cfg.recrash_one_in = o.recrash_one_in.unwrap_or(if cfg.image.is_some() {
        IMAGE_RECRASH_ONE_IN_DEFAULT
    } else {
        check::RECRASH_ONE_IN_DEFAULT
    });
    if o.stop_at_first {
        cfg.stop_after = Some(1);
    }
    cfg.jobs = crate::args::jobs_default(o.jobs);
    // An engine of several files runs through check_dir, which has its own crash states.
    if cfg.engine.capabilities().directory {
        return directory_flags(o, C::ENGINE).map(|()| cfg);
    }
    match cfg.unsupported() {
        Some(why) => Err(why),
        None => Ok(cfg),
    }
}

/// `Err` naming the first flag `check_dir` does not run: an engine of several files is
/// checked on its seed's workload, without a schedule, an image or a storage wrapper, and
/// refused those rather than checked without them.
fn directory_flags(o: &CheckArgs, engine: &str) -> Result<(), String> {
    let wrapper = o.control.filter(|c| c.is_storage_wrapper());
    let refused = [
        (o.from_image.is_some(), "--from-image"),
        (o.all_workloads, "--all-workloads"),
        (o.variants, "--variants"),
        (o.interleavings.is_some(), "--interleavings"),
        (o.batched, "--batched"),
        (o.html_dir.is_some(), "--html-dir"),
        (wrapper.is_some(), "--control with a storage wrapper"),
    ];
    match refused.iter().find(|(set, _)| *set) {
        Some((_, flag)) => Err(format!(
            "{flag} is not checked on {engine}, an engine of several files: its crash states \
             are the file system's (check_dir), on the seed's or the case's workload"
        )),
        None => Ok(()),
    }
}

fn header<C: EngineConfig>(cfg: &CheckConfig<C>) -> String {
    format!(
        "check seed {} ops {} · {}\n  engine: {} · {}\n",
        cfg.seed,
        cfg.ops.len(),
        cfg.params,
        C::ENGINE,
        cfg.engine.describe()
    )
}

/// A case file per reported violation, and the line that replays it.
fn save_found<C: EngineConfig>(cfg: &CheckConfig<C>, report: &CheckReport, dir: &Path) {
    for (i, f) in report.found.iter().enumerate() {
        let name = format!(
            "check-{}-{}-{}-{}.case",
            cfg.seed,
            cfg.params.control,
            C::ENGINE,
            i
        );
        save_state(cfg, &f.state, dir, &name);
    }
}

/// An HTML page per reported violation, named as its saved case is.
fn html_found<E: Engine>(
    cfg: &CheckConfig<E::Config>,
    report: &CheckReport,
    found_dir: &Path,
    dir: &Path,
) {
    for (i, f) in report.found.iter().enumerate() {
        let name = format!(
            "check-{}-{}-{}-{}",
            cfg.seed,
            cfg.params.control,
            E::Config::ENGINE,
            i
        );
        html_state::<E>(cfg, &f.state, &found_dir.join(format!("{name}.case")), dir);
    }
}

/// The HTML page of `state`, saved as `case`: `dir/<case's stem>.html` (a message on stderr
/// when it cannot be written; the check goes on).
fn html_state<E: Engine>(
    cfg: &CheckConfig<E::Config>,
    state: &CrashState,
    case: &Path,
    dir: &Path,
) {
    let stem = case.file_stem().unwrap_or_default().to_string_lossy();
    let path = dir.join(format!("{stem}.html"));
    let repro = format!("crashlab repro {}", case.display());
    let written = crate::html::from_check::<E>(cfg, state, repro)
        .and_then(|page| crate::html::write_page(&path, &page));
    match written {
        Ok(()) => println!("  report: {}", path.display()),
        Err(m) => eprintln!("could not write a report for {state}: {m}"),
    }
}

/// Save the case that replays `state` of `cfg` as `dir/name`, and print its repro line.
fn save_state<C: EngineConfig>(cfg: &CheckConfig<C>, state: &CrashState, dir: &Path, name: &str) {
    match save(dir, name, &cfg.to_case(state.clone())) {
        Ok(path) => println!("  repro: crashlab repro {}", path.display()),
        Err(e) => eprintln!("could not save a case under {}: {e}", dir.display()),
    }
}

/// Most combinations of schedules `--interleavings` checks.
const INTERLEAVINGS_MAX: usize = 1 << 16;

/// `--interleavings`: 1 to `INTERLEAVINGS_MAX` combinations.
fn interleavings(s: &str) -> Result<usize, String> {
    bounded_count(s, INTERLEAVINGS_MAX, "INTERLEAVINGS_MAX")
}

/// `--interleavings N`: the workload under every schedule of its groups, a case (and with
/// `--html-dir` a page) per reported violation (at most `max_reported` in all).
fn run_interleavings<E: Engine>(
    cfg: &CheckConfig<E::Config>,
    limit: usize,
    o: &CheckArgs,
) -> ExitCode {
    if !cfg
        .ops
        .iter()
        .any(|op| matches!(op, crashlab_sim::op::Op::Group { .. }))
    {
        return bad_input("--interleavings: the workload has no group of concurrent callers");
    }
    print!("{}", header(cfg));
    let started = Instant::now();
    let all = check::check_interleavings::<E>(cfg, limit);
    let wall_s = started.elapsed().as_secs_f64();
    print!("{}", all.text());
    println!(
        "checked in {wall_s:.3} s: {:.0} states/s",
        all.states() as f64 / wall_s.max(1e-9)
    );
    let found = all
        .checked
        .iter()
        .flat_map(|c| c.report.found.iter().map(move |f| (c, f)));
    for (i, (c, f)) in found.take(cfg.max_reported).enumerate() {
        let name = format!(
            "check-interleaved-{}-{}-{}-{i}.case",
            cfg.seed,
            cfg.params.control,
            E::Config::ENGINE
        );
        println!(
            "  batches={} at op {}: {} {}",
            c.schedules.join(" "),
            f.op,
            f.verdict,
            f.detail
        );
        save_state(&c.cfg, &f.state, &o.found_dir, &name);
        if let Some(dir) = &o.html_dir {
            html_state::<E>(&c.cfg, &f.state, &o.found_dir.join(&name), dir);
        }
    }
    if all.violating_states() > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

/// `--depth`: 1 to `DEPTH_MAX` transactions.
fn depth(s: &str) -> Result<usize, String> {
    bounded_count(s, check::enumerate::DEPTH_MAX, "DEPTH_MAX")
}

/// `--tx-ops`: 1 to `TX_OPS_MAX` data operations per transaction.
fn tx_ops(s: &str) -> Result<usize, String> {
    bounded_count(s, check::alphabet::TX_OPS_MAX, "TX_OPS_MAX")
}

fn bounded_count(s: &str, max: usize, name: &str) -> Result<usize, String> {
    match s.parse::<usize>() {
        Ok(n) if (1..=max).contains(&n) => Ok(n),
        Ok(n) => Err(format!("{n} is not from 1 to {max} ({name})")),
        Err(_) => Err(format!("expected a number from 1 to {max}, found `{s}`")),
    }
}

/// `--all-workloads`: every workload of the space × every variant, one row per variant, then
/// the totals and a case per reported violation.
fn run_all_workloads<E: Engine>(base: &CheckConfig<E::Config>, o: &CheckArgs) -> ExitCode {
    let mut alphabet = check::Alphabet::standard(&base.engine.capabilities());
    if let Some(m) = o.tx_ops {
        alphabet.tx_ops = m;
    }
    let space = check::Space {
        alphabet,
        depth: o.depth.unwrap_or(1),
    };
    if let Err(m) = space.validate() {
        return bad_input(format!("--all-workloads: {m}"));
    }
    print!("{}", header(base));
    let started = Instant::now();
    let mut last = started;
    let report = check::check_all_workloads::<E>(base, &space, &mut |p| match p {
        check::Progress::Enumerated { counts, variants } => {
            print!("{}", check::space_header(&space, counts));
            println!("  × {variants} variants of the engine's options");
            print!("{}", check::TABLE_HEAD);
            last = Instant::now();
        }
        check::Progress::Variant(row) => {
            let now = Instant::now();
            print!("{}", row.line(Some((now - last).as_secs_f64())));
            last = now;
        }
    });
    let wall_s = started.elapsed().as_secs_f64();
    print!("{}", report.summary(Some(wall_s)));
    for (i, f) in report.found.iter().enumerate() {
        let name = format!(
            "check-all-{}-{}-{}-{i}.case",
            space.depth,
            base.params.control,
            E::Config::ENGINE
        );
        save_state(&f.cfg, &f.found.state, &o.found_dir, &name);
        if let Some(dir) = &o.html_dir {
            html_state::<E>(&f.cfg, &f.found.state, &o.found_dir.join(&name), dir);
        }
    }
    if report.total().violating_states > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

fn save<C: EngineConfig>(dir: &Path, name: &str, case: &Case<C>) -> std::io::Result<PathBuf> {
    std::fs::create_dir_all(dir)?;
    let path = dir.join(name);
    crashlab_sim::input::writable_target(&path).map_err(std::io::Error::other)?;
    std::fs::write(&path, case.to_text())?;
    Ok(path)
}

/// Every variant of the engine's options × batched or not, one row each.
fn run_variants<E: Engine>(base: &CheckConfig<E::Config>) -> ExitCode {
    let variants = match base.variants() {
        Ok(v) => v,
        Err(m) => return bad_input(format!("--variants: {m}")),
    };
    print!("{}", header(base));
    println!("| options | batched | crash points | exhaustive | states | distinct | violations | states/s |");
    println!("|---|---|---|---|---|---|---|---|");
    let (mut states, mut wall, mut violations) = (0u64, 0f64, 0u64);
    for cfg in variants {
        let started = Instant::now();
        let r = check::check::<E>(&cfg);
        let w = started.elapsed().as_secs_f64();
        println!(
            "| {} | {} | {} | {} | {} | {} | {} | {:.0} |",
            cfg.engine.to_case_text().unwrap_or_default(),
            cfg.params.batched,
            r.crash_points,
            r.coverage.exhaustive,
            r.states(),
            r.distinct,
            r.violating_states,
            r.states() as f64 / w.max(1e-9)
        );
        states += r.states();
        wall += w;
        violations += r.violating_states;
    }
    println!(
        "total: {states} states in {wall:.3} s ({:.0} states/s) · {violations} violating states",
        states as f64 / wall.max(1e-9)
    );
    if violations > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

/// `crashlab repro` of a case that names a crash state; `save_image`: where to write the disk
/// image the state leaves.
pub fn replay_state<E: Engine>(
    case: &Case<E::Config>,
    state: &CrashState,
    save_image: Option<&Path>,
) -> ExitCode {
    let cfg = CheckConfig::from_case(case);
    print!("{}", header(&cfg));
    println!("crash state: {state}");
    if let Some(path) = save_image {
        let image = match check::state_image::<E>(&cfg, state) {
            Ok(image) => image,
            Err(m) => return bad_input(format!("cannot save an image: {m}")),
        };
        if let Err(e) = std::fs::write(path, &image) {
            return bad_input(format!("cannot write {}: {e}", path.display()));
        }
        println!(
            "saved the crash state's disk image ({} bytes): crashlab db check {}",
            image.len(),
            path.display()
        );
    }
    let got = match check::replay::<E>(&cfg, state) {
        Replayed::Missing(m) => return bad_input(format!("cannot replay this state: {m}")),
        Replayed::Violation { verdict, detail } => {
            println!("VIOLATION {verdict}: {detail}");
            Expect::Violation
        }
        Replayed::Clean => {
            println!("ok: the state recovers as allowed");
            Expect::Ok
        }
    };
    print_expectation(case.expect, got, "state");
    if got == Expect::Violation {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

/// `--max-states` from a pre-built image: each distinct state is a copy of the whole image.
const IMAGE_MAX_STATES_DEFAULT: u64 = 64;
/// `--recrash-one-in` from a pre-built image: a re-crashed recovery records the whole image
/// again at each of its crash points (five times the cost of the check in docs/checker.md).
const IMAGE_RECRASH_ONE_IN_DEFAULT: u64 = 0;

/// `--from-image SHAPE`: build the image (timed on its own), check from it, and print the line
/// that reruns the check for each violation (a case file cannot carry the image).
fn run_from_image<E: Engine>(
    cfg: &CheckConfig<E::Config>,
    o: &CheckArgs,
    source: &Source,
) -> ExitCode {
    print!("{}", header(cfg));
    let started = Instant::now();
    let image = match check::prebuild::<E>(cfg) {
        Ok(Some(image)) => image,
        Ok(None) => unreachable!("the check names an image"),
        Err(m) => {
            println!("VIOLATION: {m}");
            return ExitCode::from(1);
        }
    };
    let built_s = started.elapsed().as_secs_f64();
    println!("image built in {built_s:.3} s");
    let started = Instant::now();
    let report = check::check_on::<E>(cfg, Some(&image));
    let wall_s = started.elapsed().as_secs_f64();
    print!("{}", report.text(Some(wall_s)));
    if report.violating_states == 0 {
        return ExitCode::SUCCESS;
    }
    println!("  repro: {}", rerun_line(cfg, o, source));
    ExitCode::from(1)
}

/// The command line that reruns this check (deterministic: it finds the same states).
fn rerun_line<C: EngineConfig>(cfg: &CheckConfig<C>, o: &CheckArgs, source: &Source) -> String {
    let mut line = match source {
        Source::Case(file, _) => format!("crashlab check --case {}", file.display()),
        Source::Seed(seed) => format!(
            "crashlab check --engine {} --seed {seed} --ops {}",
            C::ENGINE,
            o.ops
        ),
    };
    let p = &cfg.params;
    let shape = cfg.image.map_or("", |s| s.name());
    line += &format!(
        " --from-image {shape} --max-states {} --sector-size {} --length {} --recrash-one-in {}",
        p.max_states, p.sector_size, p.length, cfg.recrash_one_in
    );
    if p.control != Control::None {
        line += &format!(" --control {}", p.control);
    }
    if p.batched {
        line += " --batched";
    }
    line
}
