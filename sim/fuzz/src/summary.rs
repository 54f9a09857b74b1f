//! A campaign's totals: inputs, paths reached, errors by kind, mutations applied, and failures
//! grouped by class (their signature), each with its first input.

use crate::outcome::{Counts, Failure, FailureKind};
use crate::worker::Report;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt::Write as _;

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FailureClass {
    pub kind: FailureKind,
    pub count: u64,
    /// The lowest input index of the class, and its failure's detail.
    pub first: u64,
    pub detail: String,
    /// Files its inputs were saved to.
    pub saved: Vec<String>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Summary {
    pub seed: u64,
    pub inputs: u64,
    pub counts: Counts,
    /// Failure classes by signature.
    pub classes: BTreeMap<String, FailureClass>,
}

/// Inputs saved per failure class: enough to study, few enough for a long run.
pub const SAVED_PER_CLASS: usize = 3;

impl Summary {
    pub fn new(seed: u64) -> Summary {
        Summary {
            seed,
            ..Summary::default()
        }
    }

    /// Add a finished input; returns its failure when it should be saved.
    pub fn add(&mut self, report: &Report) -> Option<&mut FailureClass> {
        self.inputs += 1;
        self.counts.merge(&report.outcome.counts);
        let failure = report.outcome.failure.as_ref()?;
        Some(self.add_failure(report.index, failure))
    }

    /// Add an input that killed its worker (counted here, since no report came).
    pub fn add_lost(&mut self, index: u64, failure: &Failure) -> &mut FailureClass {
        self.inputs += 1;
        self.counts.bump("inputs");
        self.counts
            .bump(&format!("failure:{}", failure.kind.name()));
        self.add_failure(index, failure)
    }

    fn add_failure(&mut self, index: u64, failure: &Failure) -> &mut FailureClass {
        let class = self
            .classes
            .entry(failure.signature())
            .or_insert_with(|| FailureClass {
                kind: failure.kind,
                count: 0,
                first: index,
                detail: failure.detail.clone(),
                saved: Vec::new(),
            });
        class.count += 1;
        if index < class.first {
            class.first = index;
            class.detail = failure.detail.clone();
        }
        class
    }

    pub fn failures(&self) -> u64 {
        self.classes.values().map(|c| c.count).sum()
    }

    /// The totals a person reads.
    pub fn text(&self) -> String {
        let c = &self.counts;
        let mut s = String::new();
        let line = |names: &[&str]| {
            names
                .iter()
                .map(|n| format!("{n} {}", c.get(n)))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let _ = writeln!(
            s,
            "reached: {}",
            line(&[
                "inspect-opened",
                "inspect-clean",
                "inspect-damaged",
                "read-opened"
            ])
        );
        let _ = writeln!(
            s,
            "writes: {}",
            line(&[
                "write-opened",
                "commit-attempted",
                "commit-ok",
                "commit-ok-clean",
                "commit-ok-damaged",
                "commit-refused",
                "reopened",
            ])
        );
        for (title, prefix) in [("errors", "error:"), ("mutations", "mutation:")] {
            let items: Vec<String> =
                c.0.iter()
                    .filter_map(|(k, v)| k.strip_prefix(prefix).map(|k| format!("{k} {v}")))
                    .collect();
            let _ = writeln!(s, "{title}: {}", items.join(", "));
        }
        let _ = writeln!(s, "failures: {}", self.failures());
        for (sig, class) in &self.classes {
            let _ = writeln!(s, "  ×{} {sig}", class.count);
            let _ = writeln!(s, "     first: input {}: {}", class.first, class.detail);
            for path in &class.saved {
                let _ = writeln!(s, "     replay: crashlab-fuzz replay {path}");
            }
        }
        s
    }
}
