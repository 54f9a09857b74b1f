//! The harness's own failures are reports that point at causes: an engine panic is a `panic`
//! violation naming the operation (control (l) `panic-in-commit`), and an engine's broken
//! in-memory invariant (control (k) `double-free-in-commit`) reads differently from damage
//! found on disk.

use crashlab_engine::{Db, MemStorage, Options};
use crashlab_sim::adapter::error::{DAMAGE_ON_DISK, INVARIANT_IN_MEMORY};
use crashlab_sim::adapter::EngineConfig;
use crashlab_sim::config::RunConfig;
use crashlab_sim::control::Control;
use crashlab_sim::crashlab::CrashlabDb;
use crashlab_sim::driver::{recover_image, Recovered};
use crashlab_sim::profile::Profile;
use crashlab_sim::runner::run;
use crashlab_sim::verdict::{Outcome, Verdict, Violation};

fn with(seed: u64, control: Control) -> RunConfig<Options> {
    let mut cfg = RunConfig::<Options>::from_seed(seed, 120, Profile::Default);
    cfg.engine = cfg.engine.with_control(control).unwrap();
    cfg
}

fn violation(cfg: &RunConfig<Options>) -> Option<Violation> {
    match run::<CrashlabDb>(cfg).outcome {
        Outcome::Violation(v) => Some(v),
        _ => None,
    }
}

#[test]
fn an_engine_panic_in_a_commit_is_a_violation_naming_the_panic_and_the_operation() {
    let mut caught = 0;
    for seed in 0..30 {
        let cfg = with(seed, Control::PanicInCommit);
        let Some(v) = violation(&cfg) else { continue };
        caught += 1;
        assert_eq!(v.verdict, Verdict::Panic, "seed {seed}: {v}");
        assert!(v.detail.starts_with("the engine panicked: debug hook: the commit of tx 3 panics (at engine/src/commit.rs:"), "{v}");
        let op = &cfg.ops[v.op_index];
        assert!(
            v.detail
                .contains(&format!("during op {} `{op}`", v.op_index)),
            "{v}"
        );
        assert!(
            violation(&with(seed, Control::None)).is_none(),
            "seed {seed}: the twin passes"
        );
    }
    assert!(caught >= 20, "caught in {caught} of 30 seeds");
}

#[test]
fn a_double_free_in_the_commit_reads_as_an_invariant_not_as_damage_on_disk() {
    let mut caught = 0;
    for seed in 0..30 {
        let cfg = with(seed, Control::DoubleFreeInCommit);
        let Some(v) = violation(&cfg) else { continue };
        caught += 1;
        assert_eq!(v.verdict, Verdict::CommitRefused, "seed {seed}: {v}");
        assert!(
            v.detail
                .contains(&format!("{INVARIANT_IN_MEMORY}: the commit of tx ")),
            "{v}"
        );
        assert!(v.detail.contains(" twice (during op "), "{v}");
        assert!(v.detail.contains(", on the file as "), "{v}");
        assert!(!v.detail.contains(DAMAGE_ON_DISK), "{v}");
        assert!(
            violation(&with(seed, Control::None)).is_none(),
            "seed {seed}: the twin passes"
        );
    }
    assert!(caught >= 20, "caught in {caught} of 30 seeds");
}

#[test]
fn damaged_bytes_on_disk_read_as_damage_naming_the_page() {
    let opts = Options {
        page_size: 512,
        ..Options::default()
    };
    let storage = MemStorage::new();
    let db = Db::open(storage.clone(), opts.clone()).unwrap();
    db.update(|tx| {
        let mut b = tx.create_bucket(b"a")?;
        for i in 0..40u32 {
            b.put(format!("k{i:02}").as_bytes(), &[7u8; 40])?;
        }
        Ok(())
    })
    .unwrap();
    drop(db);
    let image = storage.snapshot();
    let pages = image.len() / 512;
    // Every page past the metas and the freelist: its header's type byte made nonsense.
    let mut named = 0;
    for page in 3..pages {
        let mut bad = image.clone();
        bad[page * 512 + 8..page * 512 + 10].copy_from_slice(&[0xEE, 0xEE]);
        if let Recovered::Corrupt(m) = recover_image::<CrashlabDb>(bad, &opts) {
            assert!(m.contains(DAMAGE_ON_DISK), "{m}");
            assert!(!m.contains(INVARIANT_IN_MEMORY), "{m}");
            assert!(m.contains("page "), "{m}");
            named += 1;
        }
    }
    assert!(named > 0, "some damaged page is found");
}
