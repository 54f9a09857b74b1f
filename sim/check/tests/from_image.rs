//! `check --from-image`: the crash states of a small workload started from a pre-built large
//! image, where the format changes shape.
//!
//! Negative control (n), `freelist-count-wraps`, writes a freelist of 0xFFFF ids or more without
//! the count escape. From the `escaped-freelist` image, the checked workload's first commit
//! rewrites such a freelist, so the crash states after it recover a freelist page whose header
//! does not fit its count: the checker reports violations, and the same check without the
//! control reports none. From an empty file the same workload on the same engine never frees
//! 0xFFFF pages, so the checker without the image does not see the bug at all: that is what the
//! image mode is for.

use crashlab_check::{check, check_on, prebuild, CheckConfig, CheckReport, Shape};
use crashlab_engine::Options;
use crashlab_sim::control::Control;
use crashlab_sim::crashlab::CrashlabDb;
use crashlab_sim::op::{Name, Op};
use crashlab_sim::spec::CrashState;

/// A seed whose options under the `scale` profile write the freelist at commit and sync
/// (asserted below), and whose first six operations commit twice.
const SEED: u64 = 17;
const OPS: usize = 6;
/// Few states per crash point: every distinct state of a 48 MiB image costs a copy of it.
const MAX_STATES: u64 = 16;

fn small(mut cfg: CheckConfig<Options>) -> CheckConfig<Options> {
    cfg.params.max_states = MAX_STATES;
    cfg.params.sector_size = 512;
    cfg.recrash_one_in = 0;
    cfg.jobs = 2;
    cfg
}

fn crossed(r: &CheckReport, name: &str) -> u64 {
    let found = r.thresholds.named().into_iter().find(|(n, _)| *n == name);
    found.expect("a threshold's name").1
}

#[test]
fn a_freelist_count_without_its_escape_is_caught_from_the_image_and_only_there() {
    let cfg = small(CheckConfig::from_seed_on_image(
        SEED,
        OPS,
        Shape::EscapedFreelist,
    ));
    assert!(
        !cfg.engine.no_freelist_sync && !cfg.engine.no_sync,
        "seed {SEED}'s options must write the freelist at commit: {:?}",
        cfg.engine
    );
    let image = prebuild::<CrashlabDb>(&cfg)
        .expect("the image builds")
        .expect("the check names an image");
    let facts = image.facts();
    assert!(facts.bytes >= (0xFFFF + 2048) * 512, "{facts:?}");
    assert!(facts.thresholds.freelist_escape > 0, "{facts:?}");

    // The clean twin: no violation, and the checked workload itself rewrote an escaped list.
    let clean = check_on::<CrashlabDb>(&cfg, Some(&image));
    assert_eq!(clean.violating_states, 0, "{}", clean.text(None));
    assert!(
        crossed(&clean, "freelist-escape") > 0,
        "{:?}",
        clean.thresholds
    );
    assert!(clean.crash_points > 0 && clean.distinct > 1, "{clean:?}");
    let text = clean.text(None);
    assert!(
        text.contains("image: escaped-freelist · ")
            && text.contains("thresholds the checked workload crossed: freelist-escape "),
        "{text}"
    );

    // The bug, on the same image (built without the control): found at crash states.
    let mut bug = cfg.clone();
    bug.params.control = Control::FreelistCountWraps;
    let r = check_on::<CrashlabDb>(&bug, Some(&image));
    assert!(r.violating_states > 0, "{}", r.text(None));
    let first = r.found.first().expect("a violation is reported");
    assert!(
        !matches!(first.state, CrashState::Live { .. }),
        "found at a crash state, not by the recorded run: {first:?}"
    );
    assert!(
        r.found
            .iter()
            .any(|f| f.detail.contains("claims more pages than")),
        "{}",
        r.text(None)
    );

    // The same engine, workload and control from an empty file: nothing to find.
    let mut empty = bug.clone();
    empty.image = None;
    let r = check::<CrashlabDb>(&empty);
    assert_eq!(r.violating_states, 0, "{}", r.text(None));
    assert_eq!(crossed(&r, "freelist-escape"), 0, "{:?}", r.thresholds);
    assert!(r.image.is_none());
}

/// Put a key into the workload's bucket `a`, commit, delete it, commit.
fn writes_to_a() -> Vec<Op> {
    let a = vec![Name::new("a")];
    let key = Name::new("k1");
    vec![
        Op::CreateBucket(a.clone()),
        Op::Put {
            path: a.clone(),
            key: key.clone(),
            len: 20,
            version: 1,
        },
        Op::Commit,
        Op::Delete { path: a, key },
        Op::Commit,
    ]
}

#[test]
fn every_shape_builds_and_its_threshold_is_crossed_by_the_checked_workload() {
    for shape in [Shape::DeepTree, Shape::ManyBuckets, Shape::LongOverflow] {
        let mut cfg = small(CheckConfig::from_seed_on_image(SEED, 1, shape));
        cfg.ops = writes_to_a();
        cfg.params.max_states = 4;
        let r = check::<CrashlabDb>(&cfg);
        assert_eq!(r.violating_states, 0, "{shape}: {}", r.text(None));
        let image = r.image.as_ref().expect("the report describes the image");
        assert_eq!(image.shape, shape);
        match shape.threshold() {
            Some(name) => assert!(crossed(&r, name) > 0, "{shape}: {:?}", r.thresholds),
            // The image holds long chains; the workload's overwrite of `k1` frees one.
            None => assert!(image.thresholds.overflow_chain > 0, "{shape}: {image:?}"),
        }
        if shape == Shape::ManyBuckets {
            assert!(image.buckets >= 1000, "{image:?}");
        }
    }
}

#[test]
fn an_engine_whose_pages_are_not_512_bytes_is_refused() {
    let mut cfg = CheckConfig::<Options>::from_seed_on_image(SEED, OPS, Shape::DeepTree);
    cfg.engine.page_size = 4096;
    let why = cfg.unsupported().expect("refused");
    assert!(why.contains("sized for 512-byte pages"), "{why}");
    assert!(prebuild::<CrashlabDb>(&cfg).is_err());
}
