//! The known-truth table's figures over a long sweep of every mode and both positive controls:
//! `cargo test --release -p crashlab-sqlite --test suite figures:: -- --ignored --nocapture`.

use crate::common;

use common::{modes_on, sweep};
use crashlab_sqlite::{Journal, SqliteChoices, Synchronous};

#[test]
#[ignore = "long: run with --ignored"]
fn print_the_known_truth_figures() {
    let seeds: u64 = std::env::var("SQLITE_SEEDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(10_000);
    let mut modes = modes_on();
    for journal in Journal::ON {
        modes.push(SqliteChoices {
            journal,
            synchronous: Synchronous::Off,
        });
    }
    modes.push(SqliteChoices {
        journal: Journal::Off,
        synchronous: Synchronous::Full,
    });
    println!("| mode | claimed | seeds | commits | power cuts = states checked | acknowledged lost | violations (seeds) | first |");
    println!("|---|---|---|---|---|---|---|---|");
    for cfg in modes {
        let t = sweep(0..seeds, cfg, 40);
        let first = t
            .violations
            .first()
            .map(|(s, v)| format!("seed {s}: {v}"))
            .unwrap_or_default();
        println!(
            "| {cfg} | {:?} | {} | {} | {} | {} | {} | {first} |",
            cfg.ack(),
            t.seeds,
            t.commits,
            t.power_cuts,
            t.lost_acknowledged,
            t.violations.len()
        );
    }
}
