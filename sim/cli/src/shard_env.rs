//! Which shard of a sweep this process runs, from the flags or from the scheduler that started
//! it, so one command line serves every task of a job:
//!
//! - `--shard i/n` (a CI matrix, or by hand) wins over everything in the environment;
//! - a Kubernetes Indexed Job sets `JOB_COMPLETION_INDEX` in each pod; the shard count is the
//!   Job's `completions`, given by `--shard-count N` or `CRASHLAB_SHARD_COUNT`;
//! - a Slurm job array sets `SLURM_ARRAY_TASK_ID`, `SLURM_ARRAY_TASK_COUNT`,
//!   `SLURM_ARRAY_TASK_MIN` and, for a stepped array (`--array=1-9:2`), `SLURM_ARRAY_TASK_STEP`:
//!   the shard is `(ID - MIN) / STEP` of `COUNT` (`--shard-count` wins over `COUNT`);
//! - nothing: the whole range, shard 0/1.
//!
//! Anything that does not add up — an index past the count, an index without a count, a count
//! without an index, both schedulers at once, a value that is not a number — is refused with the
//! variable named: a task that silently ran the whole range, or nothing, is the failure a nightly
//! sweep must not have. [`resolve`] is pure (the variables come in as a value), so every case is
//! tested without touching the process environment.

use crashlab_sim::limits::SHARDS_MAX;

/// The scheduler variables [`resolve`] reads, as found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SchedulerEnv {
    pub job_completion_index: Option<String>,
    pub crashlab_shard_count: Option<String>,
    pub slurm_array_task_id: Option<String>,
    pub slurm_array_task_count: Option<String>,
    pub slurm_array_task_min: Option<String>,
    pub slurm_array_task_step: Option<String>,
}

/// The variable that gives the shard count with a Kubernetes index.
pub const SHARD_COUNT_VAR: &str = "CRASHLAB_SHARD_COUNT";

impl SchedulerEnv {
    /// The variables of this process (an empty one counts as unset, as shells often export
    /// `VAR=` for "none").
    pub fn from_process() -> SchedulerEnv {
        let var = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
        SchedulerEnv {
            job_completion_index: var("JOB_COMPLETION_INDEX"),
            crashlab_shard_count: var(SHARD_COUNT_VAR),
            slurm_array_task_id: var("SLURM_ARRAY_TASK_ID"),
            slurm_array_task_count: var("SLURM_ARRAY_TASK_COUNT"),
            slurm_array_task_min: var("SLURM_ARRAY_TASK_MIN"),
            slurm_array_task_step: var("SLURM_ARRAY_TASK_STEP"),
        }
    }
}

/// The shard `(i, n)` to run: `flag` is `--shard`, `count_flag` is `--shard-count`.
pub fn resolve(
    flag: Option<(u64, u64)>,
    count_flag: Option<u64>,
    env: &SchedulerEnv,
) -> Result<(u64, u64), String> {
    if let Some(shard) = flag {
        if count_flag.is_some() {
            return Err(
                "--shard-count goes with a scheduler's index; --shard i/n names both".into(),
            );
        }
        return Ok(shard);
    }
    match (&env.job_completion_index, &env.slurm_array_task_id) {
        (Some(_), Some(_)) => Err(
            "both JOB_COMPLETION_INDEX (Kubernetes) and SLURM_ARRAY_TASK_ID (Slurm) are set: \
             pass --shard i/n to say which shard this is"
                .into(),
        ),
        (Some(index), None) => kubernetes(index, count_flag, env),
        (None, Some(id)) => slurm(id, count_flag, env),
        (None, None) => match (count_flag, &env.crashlab_shard_count) {
            (Some(_), _) => Err("--shard-count is set but no shard index: it goes with \
                 JOB_COMPLETION_INDEX or SLURM_ARRAY_TASK_ID (or pass --shard i/n)"
                .into()),
            (None, Some(n)) => Err(format!(
                "{SHARD_COUNT_VAR}={n} is set but no shard index: it goes with \
                 JOB_COMPLETION_INDEX (or pass --shard i/n)"
            )),
            (None, None) => Ok((0, 1)),
        },
    }
}

fn kubernetes(
    index: &str,
    count_flag: Option<u64>,
    env: &SchedulerEnv,
) -> Result<(u64, u64), String> {
    let i = number("JOB_COMPLETION_INDEX", index)?;
    let n = match (count_flag, &env.crashlab_shard_count) {
        (Some(n), _) => count("--shard-count", n)?,
        (None, Some(n)) => count(SHARD_COUNT_VAR, number(SHARD_COUNT_VAR, n)?)?,
        (None, None) => {
            return Err(format!(
                "JOB_COMPLETION_INDEX={i} is set (a Kubernetes Indexed Job) but not the shard \
                 count: pass --shard-count N or set {SHARD_COUNT_VAR} to the Job's completions"
            ))
        }
    };
    within(i, n, &format!("JOB_COMPLETION_INDEX={i}"))
}

fn slurm(id: &str, count_flag: Option<u64>, env: &SchedulerEnv) -> Result<(u64, u64), String> {
    let id = number("SLURM_ARRAY_TASK_ID", id)?;
    let min = match &env.slurm_array_task_min {
        Some(m) => number("SLURM_ARRAY_TASK_MIN", m)?,
        None => 0,
    };
    let step = match &env.slurm_array_task_step {
        Some(s) => match number("SLURM_ARRAY_TASK_STEP", s)? {
            0 => return Err("SLURM_ARRAY_TASK_STEP=0: a step is at least 1".into()),
            s => s,
        },
        None => 1,
    };
    let n = match (count_flag, &env.slurm_array_task_count) {
        (Some(n), _) => count("--shard-count", n)?,
        (None, Some(n)) => count(
            "SLURM_ARRAY_TASK_COUNT",
            number("SLURM_ARRAY_TASK_COUNT", n)?,
        )?,
        (None, None) => {
            return Err(format!(
                "SLURM_ARRAY_TASK_ID={id} is set but SLURM_ARRAY_TASK_COUNT is not: pass \
                 --shard-count N (the array's size)"
            ))
        }
    };
    let what = format!("SLURM_ARRAY_TASK_ID={id} (SLURM_ARRAY_TASK_MIN={min}, step {step})");
    let offset = id
        .checked_sub(min)
        .ok_or_else(|| format!("{what} is below the array's first task"))?;
    if offset % step != 0 {
        return Err(format!(
            "{what} is not on the array's step: crashlab needs an array of a regular range \
             (--array=A-B or A-B:S)"
        ));
    }
    within(offset / step, n, &what)
}

fn number(var: &str, value: &str) -> Result<u64, String> {
    value
        .trim()
        .parse::<u64>()
        .map_err(|_| format!("{var}=`{value}` is not a non-negative decimal number"))
}

/// A shard count: 1 to `SHARDS_MAX`.
fn count(source: &str, n: u64) -> Result<u64, String> {
    if n == 0 || n > SHARDS_MAX {
        return Err(format!(
            "{source}={n}: a shard count is 1 to {SHARDS_MAX} (SHARDS_MAX)"
        ));
    }
    Ok(n)
}

fn within(i: u64, n: u64, what: &str) -> Result<(u64, u64), String> {
    if i >= n {
        return Err(format!(
            "{what} gives shard index {i}, not below the shard count {n}: the count must be the \
             number of tasks (indexes 0 to {})",
            n - 1
        ));
    }
    Ok((i, n))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn k8s(index: &str, count: Option<&str>) -> SchedulerEnv {
        SchedulerEnv {
            job_completion_index: Some(index.into()),
            crashlab_shard_count: count.map(Into::into),
            ..SchedulerEnv::default()
        }
    }

    fn slurm_env(id: &str, count: &str, min: Option<&str>, step: Option<&str>) -> SchedulerEnv {
        SchedulerEnv {
            slurm_array_task_id: Some(id.into()),
            slurm_array_task_count: Some(count.into()),
            slurm_array_task_min: min.map(Into::into),
            slurm_array_task_step: step.map(Into::into),
            ..SchedulerEnv::default()
        }
    }

    fn refused(r: Result<(u64, u64), String>, needles: &[&str]) {
        let m = r.expect_err("refused");
        for n in needles {
            assert!(m.contains(n), "missing `{n}` in: {m}");
        }
    }

    #[test]
    fn no_scheduler_is_the_whole_range_and_the_flag_wins() {
        let none = SchedulerEnv::default();
        assert_eq!(resolve(None, None, &none), Ok((0, 1)));
        assert_eq!(resolve(Some((2, 5)), None, &none), Ok((2, 5)));
        assert_eq!(
            resolve(Some((2, 5)), None, &k8s("9", Some("10"))),
            Ok((2, 5))
        );
        assert_eq!(
            resolve(Some((0, 3)), None, &slurm_env("7", "8", None, None)),
            Ok((0, 3))
        );
    }

    #[test]
    fn kubernetes_takes_its_count_from_the_flag_or_the_variable() {
        assert_eq!(resolve(None, None, &k8s("3", Some("8"))), Ok((3, 8)));
        assert_eq!(resolve(None, Some(4), &k8s("3", None)), Ok((3, 4)));
        assert_eq!(
            resolve(None, Some(4), &k8s("3", Some("8"))),
            Ok((3, 4)),
            "flag wins"
        );
        refused(
            resolve(None, None, &k8s("3", None)),
            &["JOB_COMPLETION_INDEX=3", "--shard-count", SHARD_COUNT_VAR],
        );
        refused(
            resolve(None, None, &k8s("8", Some("8"))),
            &["JOB_COMPLETION_INDEX=8", "count 8"],
        );
        refused(
            resolve(None, None, &k8s("x1", Some("8"))),
            &["JOB_COMPLETION_INDEX=`x1`"],
        );
        refused(
            resolve(None, None, &k8s("-1", Some("8"))),
            &["JOB_COMPLETION_INDEX=`-1`"],
        );
        refused(
            resolve(None, None, &k8s("0", Some("eight"))),
            &["CRASHLAB_SHARD_COUNT=`eight`"],
        );
        refused(
            resolve(None, None, &k8s("0", Some("0"))),
            &["CRASHLAB_SHARD_COUNT=0"],
        );
        refused(
            resolve(None, None, &k8s("0", Some("65537"))),
            &["SHARDS_MAX"],
        );
    }

    #[test]
    fn slurm_counts_from_the_arrays_first_task_and_step() {
        assert_eq!(
            resolve(None, None, &slurm_env("0", "4", Some("0"), None)),
            Ok((0, 4))
        );
        // --array=1-4: tasks 1..=4 are shards 0..=3.
        assert_eq!(
            resolve(None, None, &slurm_env("4", "4", Some("1"), None)),
            Ok((3, 4))
        );
        // --array=10-16:2: tasks 10, 12, 14, 16.
        assert_eq!(
            resolve(None, None, &slurm_env("14", "4", Some("10"), Some("2"))),
            Ok((2, 4))
        );
        assert_eq!(
            resolve(None, Some(2), &slurm_env("1", "4", None, None)),
            Ok((1, 2))
        );
        refused(
            resolve(None, None, &slurm_env("4", "4", None, None)),
            &["SLURM_ARRAY_TASK_ID=4", "count 4"],
        );
        refused(
            resolve(None, None, &slurm_env("13", "4", Some("10"), Some("2"))),
            &["SLURM_ARRAY_TASK_ID=13", "step"],
        );
        refused(
            resolve(None, None, &slurm_env("0", "4", Some("1"), None)),
            &["below the array's first task"],
        );
        refused(
            resolve(None, None, &slurm_env("1", "4", None, Some("0"))),
            &["SLURM_ARRAY_TASK_STEP=0"],
        );
        refused(
            resolve(None, None, &slurm_env("1", "lots", None, None)),
            &["SLURM_ARRAY_TASK_COUNT=`lots`"],
        );
        let no_count = SchedulerEnv {
            slurm_array_task_id: Some("1".into()),
            ..SchedulerEnv::default()
        };
        refused(
            resolve(None, None, &no_count),
            &["SLURM_ARRAY_TASK_COUNT is not"],
        );
    }

    #[test]
    fn what_does_not_add_up_is_refused_with_the_variable_named() {
        let both = SchedulerEnv {
            slurm_array_task_id: Some("1".into()),
            ..k8s("1", Some("4"))
        };
        refused(
            resolve(None, None, &both),
            &["JOB_COMPLETION_INDEX", "SLURM_ARRAY_TASK_ID"],
        );
        let count_only = SchedulerEnv {
            crashlab_shard_count: Some("4".into()),
            ..SchedulerEnv::default()
        };
        refused(
            resolve(None, None, &count_only),
            &["CRASHLAB_SHARD_COUNT=4", "no shard index"],
        );
        refused(
            resolve(None, Some(4), &SchedulerEnv::default()),
            &["--shard-count"],
        );
        refused(
            resolve(Some((0, 2)), Some(4), &SchedulerEnv::default()),
            &["--shard-count"],
        );
    }
}
