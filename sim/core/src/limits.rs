//! Limits on everything a user can ask the simulator for, with the reason for each.
//!
//! Every count and length that comes from a command-line flag or a case file is checked against
//! one of these when it is parsed, before any work or allocation is sized by it, so a typo such
//! as `ops = 18446744073709551615` is a message naming the file, the line and the limit (exit
//! 2), not an abort or a run that never ends. The CLI flags (clap value parsers) and the case
//! parser use the same constants. The figures quoted were measured with a release build on the
//! project's 2-core VM.

use crashlab_engine::limits::{MAX_BUCKET_DEPTH, MAX_KEY_SIZE};

/// Most operations in one run or case (`--ops`, `ops = N`, the lines of an `[ops]` list). A run
/// keeps state per operation (the oracle's chain of states, the trace, the operation list that a
/// failing case saves and `shrink` replays): 100,000 operations took 5.5 s and 590 MB, about
/// 6 KB an operation, and a million took 5.7 GB. A longer campaign is more seeds, not longer runs.
pub const OPS_MAX: usize = 100_000;

/// Most operations in a workload checked crash state by crash state (`check --ops`, a case
/// replayed by the checker). The recorder keeps every crash point's image, so memory grows
/// faster than the workload: 200 operations took 5 s and 32 MB, 1,000 took 162 s and 340 MB on
/// one core. The checker is for small workloads; long ones belong to `explore`.
pub const CHECK_OPS_MAX: usize = 1_000;

/// Longest value one `put` may write, in bytes. The simulator materialises each value (in the
/// model, the engine's pages, the simulated disk's pending sectors, page cache and durable
/// image), about 11 bytes of memory per byte put: one 16 MiB put took 100 MB. Far below the
/// engine's own `MAX_VALUE_SIZE` (2³¹ − 2), which a put past this limit would otherwise
/// reach only after allocating the value.
pub const PUT_LEN_MAX: u32 = 16 << 20;

/// Most bytes all the `put`s listed in one case may write together. Eight 16 MiB puts (128 MiB)
/// took 14 s and 1.5 GB; the bound keeps a listed workload's memory near that whatever its
/// operation count. (Generated workloads draw values of at most 9,000 bytes from a small set
/// of keys, so `OPS_MAX` bounds them.)
pub const PUT_BYTES_PER_CASE_MAX: u64 = 128 << 20;

/// Most callers in one group of concurrent callers (`group callers=N`): 64, the most writers the
/// batched-commits finding measures; each caller is a simulated task.
pub const CALLERS_MAX: u32 = 64;

/// Most calls one caller of a group makes (`group ... calls=N`): a group's calls are all held
/// for the call oracle, so 64 × 512 calls of at most three operations each stay within the
/// `OPS_MAX` operations a run may hold.
pub const CALLS_PER_CALLER_MAX: u32 = 512;

/// Longest key or bucket name: one past the engine's (and bbolt's) `MAX_KEY_SIZE`, so a workload
/// can put a key past the limit and see it refused, as the model is. Only an engine that
/// declares the limit (`Capabilities::refuses_long_keys`) is given a key past it; a case file
/// that would give one to another engine is refused when it is read.
pub const NAME_LEN_MAX: usize = MAX_KEY_SIZE + 1;

/// Deepest bucket path: one past the engine's `MAX_BUCKET_DEPTH`, so a workload can ask for a
/// bucket past the nesting limit and see it refused.
pub const PATH_DEPTH_MAX: usize = MAX_BUCKET_DEPTH + 1;

/// Largest `power-cut-in N`: storage calls before an armed power cut lands. A commit makes a
/// handful of calls per dirty run of pages; a cut armed further off than a million calls never
/// lands inside the operation it was written before and is a mistake.
pub const POWER_CUT_IN_CALLS_MAX: u32 = 1 << 20;

/// Largest `end-reader N`: the position of an open reader. Readers are opened one per
/// `begin-reader` operation, so no position reaches `OPS_MAX`.
pub const READER_INDEX_MAX: u32 = OPS_MAX as u32;

/// Largest case file read, in bytes (checked before it is read whole). `OPS_MAX` operations at
/// the 20–60 bytes a generated operation takes on its line fit in 6 MB; the rest is headroom
/// for hand-written cases with long hex names.
pub const CASE_FILE_BYTES_MAX: u64 = 16 << 20;

/// Largest `--max-states` / `max_states=`: states per crash point before the checker samples.
/// Past 2²⁰ a single crash point takes minutes (the checker opens 4–80k states a second); the
/// largest bound the README's figures needed was 65,536.
pub const STATES_PER_CRASH_POINT_MAX: u64 = 1 << 20;

/// Largest `--recrash-one-in`: one distinct recovered state in N is crashed again. Past a
/// million no check of `CHECK_OPS_MAX` operations re-crashes anything (it has fewer distinct
/// states); `0` is the way to say never.
pub const RECRASH_ONE_IN_MAX: u64 = 1 << 20;

/// Largest `shrink --budget`, in runs. A run of the default 300 operations takes about 3 ms, a
/// run of `OPS_MAX` several seconds, so 100,000 runs is minutes to days; shrinking converges
/// long before on the cases seen so far (a few hundred runs).
pub const SHRINK_BUDGET_MAX: usize = 100_000;

/// Most seeds in one `explore --seeds A..B`. A seed of 300 operations takes about 3 ms, so 2³²
/// seeds is over a year of one process: a larger sweep is split into ranges or `--shard`s.
pub const SWEEP_SEEDS_MAX: u64 = 1 << 32;

/// Most shards a sweep splits into (`--shard i/n`): far more machines or CI jobs than a sweep
/// is ever spread over.
pub const SHARDS_MAX: u64 = 1 << 16;

/// Most worker threads a sweep or a check runs on (`--jobs N`): each one runs a whole
/// simulation, so more threads than any machine's cores only add memory.
pub const JOBS_MAX: usize = 1 << 10;

/// Largest `page_cache_pages` option in a case: four times the engine's default of 16,384. The
/// cache holds up to this many decoded pages (4 GiB at 64 KiB pages), more than any simulated
/// disk here holds.
pub const PAGE_CACHE_PAGES_MAX: usize = 1 << 16;

/// Largest `max_batch` option in a case: the engine's default batch limit is 1,000 calls, and a
/// group has at most 64 callers, so a larger limit only costs the coalescer's queue.
pub const MAX_BATCH_MAX: usize = 1 << 16;

/// Largest `enospc=` capacity in a case, in bytes: the simulated disk refuses lengths past
/// `SIM_DISK_LEN_MAX` (1 TiB) anyway, so a larger capacity could never be reached.
pub const ENOSPC_CAPACITY_MAX: u64 = crate::disk::SIM_DISK_LEN_MAX;

// The limits agree with each other and with the engine's, checked at compile time.
const _: () = {
    assert!(CHECK_OPS_MAX <= OPS_MAX);
    assert!(PUT_LEN_MAX as u64 <= PUT_BYTES_PER_CASE_MAX);
    assert!(PUT_LEN_MAX as usize <= crashlab_engine::limits::MAX_VALUE_SIZE);
    assert!(READER_INDEX_MAX as usize >= OPS_MAX);
    assert!((CALLERS_MAX * CALLS_PER_CALLER_MAX * 3) as usize <= OPS_MAX);
};

/// `v` checked against `max`: `Err` names what was asked for, the limit and its constant.
pub fn at_most<T: PartialOrd + std::fmt::Display>(
    what: &str,
    v: T,
    max: T,
    name: &str,
) -> Result<T, String> {
    if v <= max {
        Ok(v)
    } else {
        Err(format!(
            "{what} {v} is more than the limit of {max} ({name})"
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn at_most_names_the_value_the_limit_and_the_constant() {
        assert_eq!(at_most("ops", 5, 10, "OPS_MAX"), Ok(5));
        assert_eq!(at_most("ops", 10, 10, "OPS_MAX"), Ok(10));
        assert_eq!(
            at_most("ops =", 11, 10, "OPS_MAX"),
            Err("ops = 11 is more than the limit of 10 (OPS_MAX)".into())
        );
    }
}
