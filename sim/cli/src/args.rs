//! Parsers for the command line's values: every count and length bounded by the limit the case
//! files use (`crashlab_sim::limits`), so a typo is a message and exit 2, not a run that never
//! ends.

use crashlab_sim::case::parse_seed;
use crashlab_sim::limits::{
    CHECK_OPS_MAX, JOBS_MAX, OPS_MAX, RECRASH_ONE_IN_MAX, SHARDS_MAX, SHRINK_BUDGET_MAX,
    STATES_PER_CRASH_POINT_MAX, SWEEP_SEEDS_MAX,
};
use crashlab_sim::spec::{max_states_valid, sector_size_valid};
use crashlab_sim::sweep::SweepControl;

/// Seeds `A..B`, each decimal or a 40-hex commit hash, at most `SWEEP_SEEDS_MAX` of them.
pub fn seed_range(s: &str) -> Result<(u64, u64), String> {
    let (a, b) = s
        .split_once("..")
        .ok_or_else(|| format!("expected A..B, found `{s}`"))?;
    let (a, b) = (parse_seed(a)?, parse_seed(b)?);
    if a >= b {
        return Err(format!("empty seed range {a}..{b}"));
    }
    if b - a > SWEEP_SEEDS_MAX {
        return Err(format!(
            "the range holds {} seeds, more than the limit of {SWEEP_SEEDS_MAX} \
             (SWEEP_SEEDS_MAX): split a larger sweep into ranges",
            b - a
        ));
    }
    Ok((a, b))
}

/// `i/n` with `i < n ≤ SHARDS_MAX`.
pub fn shard(s: &str) -> Result<(u64, u64), String> {
    let bad = || format!("expected i/n with i < n ≤ {SHARDS_MAX}, found `{s}`");
    let (i, n) = s.split_once('/').ok_or_else(bad)?;
    let (i, n) = (
        i.parse::<u64>().map_err(|_| bad())?,
        n.parse::<u64>().map_err(|_| bad())?,
    );
    if n == 0 || i >= n || n > SHARDS_MAX {
        return Err(bad());
    }
    Ok((i, n))
}

/// `bench --seeds N` and `--check-seeds N`: 1 to `SWEEP_SEEDS_MAX` seeds.
pub fn seed_count(s: &str) -> Result<u64, String> {
    count(s, 1, SWEEP_SEEDS_MAX, "SWEEP_SEEDS_MAX")
}

/// `--shard-count N`: 1 to `SHARDS_MAX`.
pub fn shard_count(s: &str) -> Result<u64, String> {
    count(s, 1, SHARDS_MAX, "SHARDS_MAX")
}

/// `--jobs N`: worker threads, 1 to `JOBS_MAX`.
pub fn jobs(s: &str) -> Result<usize, String> {
    count(s, 1, JOBS_MAX as u64, "JOBS_MAX").map(|n| n as usize)
}

/// `--jobs`'s default: the cores this process may run on (1 when that cannot be told).
pub fn jobs_default(flag: Option<usize>) -> usize {
    flag.unwrap_or_else(|| {
        std::thread::available_parallelism()
            .map_or(1, std::num::NonZeroUsize::get)
            .min(JOBS_MAX)
    })
}

/// `explore --debug-control NAME`.
pub fn sweep_control(s: &str) -> Result<SweepControl, String> {
    match s {
        "worker-order" => Ok(SweepControl::WorkerOrder),
        "seed-in-signature" => Ok(SweepControl::SeedInSignature),
        _ => Err(format!("`{s}`: expected worker-order or seed-in-signature")),
    }
}

/// The most job counts one `bench --jobs` list may name.
pub const BENCH_JOB_COUNTS_MAX: usize = 8;
/// The most rounds `bench --rounds` may ask for.
pub const BENCH_ROUNDS_MAX: u64 = 100;

/// `bench --jobs A,B,…`: the job counts to compare, each 1 to `JOBS_MAX`, at most
/// [`BENCH_JOB_COUNTS_MAX`] of them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JobCounts(pub Vec<usize>);

pub fn job_counts(s: &str) -> Result<JobCounts, String> {
    let counts = s.split(',').map(jobs).collect::<Result<Vec<_>, _>>()?;
    if counts.len() > BENCH_JOB_COUNTS_MAX {
        return Err(format!(
            "{} job counts, more than the limit of {BENCH_JOB_COUNTS_MAX} \
             (BENCH_JOB_COUNTS_MAX)",
            counts.len()
        ));
    }
    Ok(JobCounts(counts))
}

/// `bench --rounds N`: 1 to [`BENCH_ROUNDS_MAX`].
pub fn rounds(s: &str) -> Result<u32, String> {
    count(s, 1, BENCH_ROUNDS_MAX, "BENCH_ROUNDS_MAX").map(|n| n as u32)
}

/// A decimal count in `lo..=max`; `name` is the limit's constant.
fn count(s: &str, lo: u64, max: u64, name: &str) -> Result<u64, String> {
    let n = s
        .parse::<u64>()
        .map_err(|_| format!("expected a number from {lo} to {max}, found `{s}`"))?;
    if n < lo {
        return Err(format!("{n} is less than {lo}"));
    }
    if n > max {
        return Err(format!("{n} is more than the limit of {max} ({name})"));
    }
    Ok(n)
}

/// `--ops` of `run` and `explore`. 0 is refused: a run of no operations tests nothing.
pub fn run_ops(s: &str) -> Result<usize, String> {
    count(s, 1, OPS_MAX as u64, "OPS_MAX").map(|n| n as usize)
}

pub fn check_ops(s: &str) -> Result<usize, String> {
    count(s, 1, CHECK_OPS_MAX as u64, "CHECK_OPS_MAX").map(|n| n as usize)
}

pub fn shrink_budget(s: &str) -> Result<usize, String> {
    count(s, 1, SHRINK_BUDGET_MAX as u64, "SHRINK_BUDGET_MAX").map(|n| n as usize)
}

pub fn max_states(s: &str) -> Result<u64, String> {
    let n = count(
        s,
        2,
        STATES_PER_CRASH_POINT_MAX,
        "STATES_PER_CRASH_POINT_MAX",
    )?;
    max_states_valid(n)
}

pub fn sector_size(s: &str) -> Result<u32, String> {
    let n = s
        .parse::<u32>()
        .map_err(|_| format!("expected a sector size in bytes, found `{s}`"))?;
    sector_size_valid(n)
}

pub fn recrash_one_in(s: &str) -> Result<u64, String> {
    count(s, 0, RECRASH_ONE_IN_MAX, "RECRASH_ONE_IN_MAX")
}
