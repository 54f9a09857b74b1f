//! Every interleaving of a workload's concurrent callers (`crashlab check --interleavings N`).
//!
//! In a run, timing decides which calls of a group share a commit, so a check of a workload
//! with a group sees one schedule of it. Here each group is pinned to every schedule the
//! engine's coalescer allows (see `crashlab_sim::schedule`) and every combination of schedules
//! across the workload's groups is checked in full — every crash state of each — up to `limit`
//! combinations; past that, a seeded sample of `limit` of them, which the report says. A group
//! with more than [`GROUP_SCHEDULES_MAX`] schedules keeps the timing's one, also said.
//!
//! A violation's case carries the pinned schedules in its `group … batches=` lines, so
//! `crashlab repro` replays that interleaving and that crash state exactly.

use crate::{check, CheckConfig, CheckReport};
use crashlab_sim::adapter::{Engine, EngineConfig};
use crashlab_sim::op::Op;
use crashlab_sim::rng::SimRng;
use crashlab_sim::schedule::Schedule;
use std::collections::BTreeSet;

/// Schedules of one group enumerated at most; a group with more keeps the timing's schedule.
pub const GROUP_SCHEDULES_MAX: usize = 100_000;

/// Callers of one group whose schedules are enumerated at most.
pub const GROUP_CALLERS_MAX: u32 = 12;

/// How one group of the workload was treated.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GroupSpace {
    /// Its operation index.
    pub op: usize,
    pub callers: u32,
    pub calls: u32,
    /// How many schedules its coalescer allows (saturating); `None`: too many to enumerate, or
    /// too many callers, so it kept the timing's schedule.
    pub schedules: Option<u128>,
}

/// One combination of schedules checked.
#[derive(Clone, Debug, PartialEq)]
pub struct Checked<C> {
    /// The workload with every enumerated group pinned.
    pub cfg: CheckConfig<C>,
    /// The schedules, one per enumerated group, as `batches=` prints them.
    pub schedules: Vec<String>,
    pub report: CheckReport,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Interleavings<C> {
    pub groups: Vec<GroupSpace>,
    /// Combinations of the enumerated groups' schedules (saturating).
    pub combinations: u128,
    /// Every combination was checked (else a seeded sample of `limit`).
    pub exhaustive: bool,
    pub checked: Vec<Checked<C>>,
}

impl<C> Interleavings<C> {
    pub fn states(&self) -> u64 {
        self.checked.iter().map(|c| c.report.states()).sum()
    }

    pub fn violating_states(&self) -> u64 {
        self.checked.iter().map(|c| c.report.violating_states).sum()
    }

    /// Combinations with at least one violating state.
    pub fn violating_combinations(&self) -> usize {
        let bad = self
            .checked
            .iter()
            .filter(|c| c.report.violating_states > 0);
        bad.count()
    }
}

/// Check `cfg`'s workload under every combination of its groups' schedules, up to `limit`.
pub fn check_interleavings<E: Engine>(
    cfg: &CheckConfig<E::Config>,
    limit: usize,
) -> Interleavings<E::Config> {
    assert!(limit > 0, "at least one combination is checked");
    let max_batch = cfg.engine.capabilities().max_batch_calls;
    let mut groups = Vec::new();
    let mut lists: Vec<(usize, Vec<Schedule>)> = Vec::new();
    for (op, g) in cfg.ops.iter().enumerate() {
        let Op::Group { callers, calls, .. } = g else {
            continue;
        };
        let (callers, calls) = (*callers, *calls);
        let all = (callers <= GROUP_CALLERS_MAX)
            .then(|| Schedule::enumerate(callers, calls, max_batch, GROUP_SCHEDULES_MAX))
            .filter(|e| e.exhaustive());
        groups.push(GroupSpace {
            op,
            callers,
            calls,
            schedules: all.as_ref().map(|e| e.total),
        });
        if let Some(e) = all {
            lists.push((op, e.schedules));
        }
    }
    let combinations = lists
        .iter()
        .fold(1u128, |n, (_, l)| n.saturating_mul(l.len() as u128));
    let picks = pick(combinations, limit, cfg.seed);
    let checked = picks
        .iter()
        .map(|&k| {
            let (ops, schedules) = pinned(&cfg.ops, &lists, k);
            let mut one = cfg.clone();
            one.ops = ops;
            let report = check::<E>(&one);
            Checked {
                cfg: one,
                schedules,
                report,
            }
        })
        .collect();
    Interleavings {
        groups,
        combinations,
        exhaustive: picks.len() as u128 == combinations,
        checked,
    }
}

/// The combinations to check, by mixed-radix index: all of them when there are at most
/// `limit`, else `limit` distinct ones drawn from `seed`, in ascending order.
fn pick(combinations: u128, limit: usize, seed: u64) -> Vec<u128> {
    if combinations <= limit as u128 {
        return (0..combinations).collect();
    }
    let mut r = SimRng::derive(seed, "interleavings");
    let mut chosen = BTreeSet::new();
    while chosen.len() < limit {
        let k = (u128::from(r.next_u64()) << 64 | u128::from(r.next_u64())) % combinations;
        chosen.insert(k);
    }
    chosen.into_iter().collect()
}

/// `ops` with combination `k`'s schedule pinned in each enumerated group.
fn pinned(ops: &[Op], lists: &[(usize, Vec<Schedule>)], mut k: u128) -> (Vec<Op>, Vec<String>) {
    let mut ops = ops.to_vec();
    let mut names = Vec::with_capacity(lists.len());
    for (op, list) in lists {
        let n = list.len() as u128;
        let chosen = list[(k % n) as usize].clone();
        k /= n;
        names.push(chosen.to_string());
        if let Op::Group { schedule, .. } = &mut ops[*op] {
            *schedule = Some(chosen);
        }
    }
    (ops, names)
}

impl<C: EngineConfig> Interleavings<C> {
    /// The report for people: the groups, then one line per violating combination, then totals.
    pub fn text(&self) -> String {
        use std::fmt::Write as _;
        let mut s = String::new();
        for g in &self.groups {
            let _ = match g.schedules {
                Some(n) => writeln!(
                    s,
                    "group at op {}: {} callers × {} calls: {n} schedules",
                    g.op, g.callers, g.calls
                ),
                None => writeln!(
                    s,
                    "group at op {}: {} callers × {} calls: too many schedules to enumerate; \
                     the timing's schedule only",
                    g.op, g.callers, g.calls
                ),
            };
        }
        let _ = writeln!(
            s,
            "interleavings: {} of {} combinations checked ({})",
            self.checked.len(),
            self.combinations,
            if self.exhaustive {
                "exhaustive"
            } else {
                "a seeded sample"
            }
        );
        for c in self
            .checked
            .iter()
            .filter(|c| c.report.violating_states > 0)
        {
            let _ = writeln!(
                s,
                "  batches={}: {} violating states",
                c.schedules.join(" "),
                c.report.violating_states
            );
        }
        let _ = writeln!(
            s,
            "states {} · violations: {} states in {} of {} combinations",
            self.states(),
            self.violating_states(),
            self.violating_combinations(),
            self.checked.len()
        );
        s
    }
}
