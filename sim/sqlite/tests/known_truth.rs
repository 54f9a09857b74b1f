//! The known-truth table (docs/sqlite.md): what SQLite's own documentation says each mode
//! survives, checked over seeded power cuts with the file system's metadata models. Each row is
//! a test; a row that expects a finding also asserts the clean rows around it find nothing.

use crate::common;

use common::{modes_on, sweep, Totals};
use crashlab_sim::adapter::Ack;
use crashlab_sqlite::{Journal, SqliteChoices, Synchronous};

const SEEDS: u64 = 60;
const TXS: u32 = 40;

fn mode(journal: Journal, synchronous: Synchronous) -> SqliteChoices {
    SqliteChoices {
        journal,
        synchronous,
    }
}

fn clean(cfg: SqliteChoices, t: &Totals) {
    assert!(t.violations.is_empty(), "{cfg}: {:#?}", t.violations);
    assert!(t.commits > SEEDS * 10, "{cfg}: {t:?}");
    assert!(t.power_cuts > SEEDS, "{cfg}: {t:?}");
    assert_eq!(t.states_checked, t.power_cuts, "{cfg}: every cut judged");
}

#[test]
fn power_safe_modes_lose_nothing_they_call_durable_and_never_corrupt() {
    for cfg in modes_on() {
        if cfg.synchronous == Synchronous::Normal {
            continue;
        }
        let t = sweep(0..SEEDS, cfg, TXS);
        clean(cfg, &t);
        if cfg.ack() == Ack::Durable {
            assert_eq!(
                t.lost_acknowledged, 0,
                "{cfg}: every commit is durable: {t:?}"
            );
        }
    }
}

#[test]
fn wal_normal_loses_only_acknowledged_commits_and_never_corrupts() {
    let cfg = mode(Journal::Wal, Synchronous::Normal);
    assert_eq!(cfg.ack(), Ack::Acknowledged);
    let t = sweep(0..SEEDS, cfg, TXS);
    clean(cfg, &t);
    assert!(
        t.lost_acknowledged > 0,
        "WAL+NORMAL does lose acknowledged commits at power cuts, as SQLite documents: {t:?}"
    );
    // Its twin with the WAL synced at every commit loses none.
    let t = sweep(0..SEEDS, mode(Journal::Wal, Synchronous::Full), TXS);
    assert_eq!(t.lost_acknowledged, 0, "{t:?}");
}

#[test]
fn delete_full_can_roll_back_the_last_commit_and_extra_cannot() {
    // FULL does not sync the directory after the journal's unlink: a cut can bring the journal
    // back, hot, and SQLite rolls the last commit back. SQLite documents EXTRA for that.
    let full = sweep(0..SEEDS, mode(Journal::Delete, Synchronous::Full), TXS);
    clean(mode(Journal::Delete, Synchronous::Full), &full);
    assert!(full.lost_acknowledged > 0, "{full:?}");
    let extra = sweep(0..SEEDS, mode(Journal::Delete, Synchronous::Extra), TXS);
    clean(mode(Journal::Delete, Synchronous::Extra), &extra);
    assert_eq!(extra.lost_acknowledged, 0, "{extra:?}");
}

/// A positive control: crashlab must find lost commits or corruption in a mode SQLite documents
/// as unsafe, when the application assumes its commits durable.
fn caught(cfg: SqliteChoices) -> Totals {
    assert!(cfg.is_positive_control() && cfg.ack() == Ack::Durable);
    let t = sweep(0..SEEDS, cfg, TXS);
    assert!(!t.violations.is_empty(), "{cfg}: nothing found: {t:?}");
    t
}

#[test]
fn positive_control_synchronous_off_is_caught() {
    for journal in Journal::ON {
        caught(mode(journal, Synchronous::Off));
    }
}

#[test]
fn positive_control_journal_off_is_caught() {
    caught(mode(Journal::Off, Synchronous::Full));
}

#[test]
fn truncate_normal_can_corrupt_as_sqlite_warns_and_full_cannot() {
    // NORMAL syncs the rollback journal once and leaves its truncation unsynced: a cut can keep
    // the last transaction's journal header over records the next one overwrote, and SQLite
    // plays part of it back. SQLite warns of corruption with NORMAL outside WAL; FULL syncs the
    // journal before its header and the truncation after the commit.
    let cfg = mode(Journal::Truncate, Synchronous::Normal);
    assert!(cfg.may_corrupt_by_documentation());
    assert!(
        !SqliteChoices::DRAWN.contains(&cfg),
        "a seed never draws it"
    );
    let t = sweep(0..SEEDS, cfg, TXS);
    assert!(
        t.violations
            .iter()
            .any(|(_, v)| v.contains("malformed") || v.starts_with("check")),
        "{t:?}"
    );
    clean(
        mode(Journal::Truncate, Synchronous::Full),
        &sweep(0..SEEDS, mode(Journal::Truncate, Synchronous::Full), TXS),
    );
}

#[test]
fn a_seed_draws_only_modes_sqlite_documents_as_safe_from_corruption() {
    use crashlab_sim::adapter::EngineConfig;
    use crashlab_sim::profile::Profile;
    let mut seen = std::collections::BTreeSet::new();
    for seed in 0..400 {
        let c = SqliteChoices::from_seed(seed, Profile::Default);
        assert!(
            !c.is_positive_control() && !c.may_corrupt_by_documentation(),
            "{c}"
        );
        seen.insert((c.journal, c.synchronous));
    }
    assert_eq!(
        seen.len(),
        SqliteChoices::DRAWN.len(),
        "every drawn mode appears: {seen:?}"
    );
}
