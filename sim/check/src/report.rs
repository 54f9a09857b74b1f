//! What a check found: the size of the space it covered, how it covered it, and each violation
//! with the minimal crash state behind it.

use crate::prebuilt::ImageFacts;
use crate::states::Coverage;
use crashlab_sim::spec::CrashState;
use crashlab_sim::thresholds::Thresholds;
use crashlab_sim::verdict::{During, Verdict};
use std::fmt::Write as _;

/// Crash points by how their subsets were chosen.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CoverageCounts {
    pub exhaustive: u64,
    pub pages_and_tears: u64,
    pub sampled: u64,
}

impl CoverageCounts {
    pub fn add(&mut self, c: Coverage) {
        match c {
            Coverage::Exhaustive => self.exhaustive += 1,
            Coverage::PagesAndTears => self.pages_and_tears += 1,
            Coverage::Sampled => self.sampled += 1,
        }
    }

    pub fn total(&self) -> u64 {
        self.exhaustive + self.pages_and_tears + self.sampled
    }
}

/// Second power cuts during recoveries.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RecoveryCounts {
    /// Recoveries re-crashed (one sampled distinct state each).
    pub sessions: u64,
    pub crash_points: u64,
    pub coverage: CoverageCounts,
    pub states: u64,
}

/// One violation, minimised.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Found {
    pub verdict: Verdict,
    pub detail: String,
    /// The workload operation running at the crash point.
    pub op: usize,
    /// The minimal crash state that shows it.
    pub state: CrashState,
    /// How the subsets of its crash point were chosen (power cuts only).
    pub coverage: Option<Coverage>,
    /// States generated before it was found.
    pub states_before: u64,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CheckReport {
    pub ops: usize,
    pub commits: u64,
    /// Crash points of the recorded run (after each write call and each sync).
    pub crash_points: u64,
    pub coverage: CoverageCounts,
    /// Most effective pending sectors at one crash point.
    pub pending_max: usize,
    /// Most pending sectors at one crash point, effective or not (the rest are past the durable
    /// length, so lost with it, or equal to what the disk already holds).
    pub pending_all_max: usize,
    /// Pending sectors written again before a sync (only `no_sync` does this; their older
    /// content is not combined with a partial later write).
    pub pending_rewrites: u64,
    /// Power-cut states generated at the recorded run's crash points (duplicates included).
    pub power_states: u64,
    /// Process-crash states (one per crash point: the page cache survives).
    pub process_states: u64,
    /// Open readers' snapshots read at crash points.
    pub reader_states: u64,
    pub recovery: RecoveryCounts,
    /// Distinct images opened (every other state was a duplicate, judged from its verdict).
    pub distinct: u64,
    pub violating_states: u64,
    pub found: Vec<Found>,
    /// The scale thresholds the recorded run crossed (its engine counters, and the acknowledged
    /// states with `MANY_BUCKETS` buckets): what a pre-built image lets a small workload reach.
    pub thresholds: Thresholds,
    /// The pre-built image the workload started from, if any.
    pub image: Option<ImageFacts>,
}

impl CheckReport {
    /// The report of a check whose pre-built image could not be built (the engine failed on a
    /// disk without faults): one violation, before the workload's first operation.
    pub fn image_failed(why: String) -> CheckReport {
        CheckReport {
            violating_states: 1,
            found: vec![Found {
                verdict: Verdict::Failed(During::Create),
                detail: why,
                op: 0,
                state: CrashState::Live { op: 0 },
                coverage: None,
                states_before: 0,
            }],
            ..CheckReport::default()
        }
    }

    /// Every state judged.
    pub fn states(&self) -> u64 {
        self.power_states + self.process_states + self.reader_states + self.recovery.states
    }

    /// States generated when the first violation was found.
    pub fn first_found_at(&self) -> Option<u64> {
        self.found.iter().map(|f| f.states_before).min()
    }

    /// The report for people; `wall_s` (measured by the caller) gives the rate.
    pub fn text(&self, wall_s: Option<f64>) -> String {
        let mut s = String::new();
        if let Some(image) = &self.image {
            let live = self
                .found
                .iter()
                .any(|f| matches!(f.state, CrashState::Live { .. }));
            s.push_str(&image_lines(image, &self.thresholds, live));
        }
        let c = &self.coverage;
        let _ = writeln!(
            s,
            "ops {} · commits {} · crash points {} (exhaustive {}, pages+tears {}, sampled {}) · most pending sectors {} ({} effective) · rewrites {}",
            self.ops, self.commits, self.crash_points, c.exhaustive, c.pages_and_tears, c.sampled,
            self.pending_all_max, self.pending_max, self.pending_rewrites
        );
        let r = &self.recovery;
        let _ = writeln!(
            s,
            "states generated {} (power cuts {}, process crashes {}, reader snapshots {}, in {} re-crashed recoveries {} at {} crash points) · distinct images opened {}",
            self.states(), self.power_states, self.process_states, self.reader_states,
            r.sessions, r.states, r.crash_points, self.distinct
        );
        if let Some(wall) = wall_s {
            let per_s = |n: u64| n as f64 / wall.max(1e-9);
            let _ = writeln!(
                s,
                "checked in {wall:.3} s: {:.0} states/s ({:.0} distinct images opened/s)",
                per_s(self.states()),
                per_s(self.distinct)
            );
        }
        let _ = writeln!(
            s,
            "violations: {} states{}",
            self.violating_states,
            self.first_found_at()
                .map_or(String::new(), |n| format!(", the first after {n} states"))
        );
        for f in &self.found {
            let _ = writeln!(
                s,
                "  {} at op {}: {}\n    crash state: {}{}",
                f.verdict,
                f.op,
                f.detail,
                f.state,
                f.coverage
                    .map_or(String::new(), |c| format!(" (crash point {c:?})"))
            );
        }
        s
    }
}

/// `image: escaped-freelist · 35,… bytes · …` and the thresholds the checked workload crossed.
/// `stopped`: the recorded run ended at a violation, so the counters of its last session were
/// never read (what it crossed there is not counted).
fn image_lines(image: &ImageFacts, checked: &Thresholds, stopped: bool) -> String {
    let crossed = |t: &Thresholds| {
        let named: Vec<String> = t
            .named()
            .into_iter()
            .filter(|(_, n)| *n > 0)
            .map(|(name, n)| format!("{name} {n}×"))
            .collect();
        if named.is_empty() {
            "none".to_string()
        } else {
            named.join(" · ")
        }
    };
    format!(
        "image: {} · {} bytes ({:.1} MiB) · {} commits · {} buckets · building it crossed: {}\n\
         thresholds the checked workload crossed: {}\n",
        image.shape,
        image.bytes,
        image.bytes as f64 / f64::from(1u32 << 20),
        image.commits,
        image.buckets,
        crossed(&image.thresholds),
        crossed(checked)
            + if stopped {
                " (the recorded run stopped at a violation: its last session is not counted)"
            } else {
                ""
            }
    )
}
