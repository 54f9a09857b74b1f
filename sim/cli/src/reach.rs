//! What a sweep reached beyond the disk: concurrent callers and the commits they shared, the
//! integrity checks run on live databases, life after failed commits, and the engine calls the
//! workloads made. `explore` prints it after its totals, one line per dimension, so a reader can
//! tell a dimension that was exercised from one that never came up (a zero is a finding too).

use crashlab_sim::driver::{GroupFigures, RunStats};

/// The lines, each ending in a newline.
pub fn reach(s: &RunStats) -> String {
    format!(
        "{}\n{}\n{}\n",
        callers(&s.groups),
        live_and_after_failure(s),
        api_calls(s)
    )
}

/// `callers: …`: groups, calls, the commits they made and how many calls each commit held.
fn callers(g: &GroupFigures) -> String {
    const BUCKETS: [&str; 8] = ["1", "2", "3-4", "5-8", "9-16", "17-32", "33-64", ">64"];
    let sizes: Vec<String> = BUCKETS
        .iter()
        .zip(g.batch_sizes)
        .filter(|(_, n)| *n > 0)
        .map(|(b, n)| format!("{b}:{n}"))
        .collect();
    format!(
        "callers: groups {} · calls {} in {} commits ({} merged) · calls per commit {} · answers: committed {}, own error {}, commit failed {}",
        g.groups,
        g.calls,
        g.commits,
        g.merged_commits,
        if sizes.is_empty() { "-".into() } else { sizes.join(" ") },
        g.answered_committed,
        g.answered_own_error,
        g.answered_commit_failed
    )
}

/// `live checks …`: checks on the open database and of its checksums, and what followed
/// failed commits.
fn live_and_after_failure(s: &RunStats) -> String {
    format!(
        "live checks {} · checksum probes {} · failed commits {}: retried on the same handle {}, \
         writes refused by the latch {}",
        s.live_checks, s.checksum_probes, s.failed_commits, s.retries, s.latched_refusals
    )
}

/// `api: …`: every operation and engine call by name, in name order.
fn api_calls(s: &RunStats) -> String {
    let calls: Vec<String> = s
        .api_calls
        .iter()
        .map(|(name, n)| format!("{name} {n}"))
        .collect();
    format!("api ({} kinds): {}", calls.len(), calls.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_dimension_has_its_line_and_zeros_show() {
        let mut s = RunStats::default();
        let text = reach(&s);
        assert_eq!(text.lines().count(), 3, "{text}");
        assert!(text
            .contains("callers: groups 0 · calls 0 in 0 commits (0 merged) · calls per commit -"));
        assert!(text.contains("live checks 0 · checksum probes 0 · failed commits 0"));
        s.groups.batch_sizes = [3, 0, 2, 0, 0, 0, 0, 1];
        s.api_calls.insert("seek absent", 4);
        s.api_calls.insert("prev", 2);
        let text = reach(&s);
        assert!(text.contains("calls per commit 1:3 3-4:2 >64:1"), "{text}");
        assert!(
            text.contains("api (2 kinds): prev 2, seek absent 4"),
            "{text}"
        );
    }
}
