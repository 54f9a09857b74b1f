//! One sweep for the seed-drawn dimensions' negative controls: each control only shows on the
//! seeds whose draw reaches it, and must change nothing on the others.

use crashlab_engine::Options;
use crashlab_sim::adapter::EngineConfig;
use crashlab_sim::case::Case;
use crashlab_sim::config::RunConfig;
use crashlab_sim::control::Control;
use crashlab_sim::crashlab::CrashlabDb;
use crashlab_sim::profile::Profile;
use crashlab_sim::runner::run;
use crashlab_sim::verdict::{Outcome, Violation};

/// Runs seeds `0..seeds` under profile `none`, clean (which must pass) and with `control` on.
/// `reaches` says, per seed, whether its draw can show the control (`None`: skip the seed). On a
/// seed it cannot reach, the control must leave the trace hash as the clean run's; on one it
/// can, each violation is handed to `judge`. Returns (seeds caught, seeds reached, seeds inert).
pub fn sweep_control(
    seeds: u64,
    control: Control,
    reaches: impl Fn(&RunConfig<Options>) -> Option<bool>,
    judge: impl FnMut(u64, &Violation),
) -> (u32, u32, u32) {
    sweep_control_on(seeds, control, |_| {}, reaches, judge)
}

/// [`sweep_control`] of each seed's run as `prepare` leaves it (its operations changed so that
/// they cannot reach the control, for one).
pub fn sweep_control_on(
    seeds: u64,
    control: Control,
    prepare: impl Fn(&mut RunConfig<Options>),
    reaches: impl Fn(&RunConfig<Options>) -> Option<bool>,
    mut judge: impl FnMut(u64, &Violation),
) -> (u32, u32, u32) {
    let (mut caught, mut reached, mut inert) = (0, 0, 0);
    for seed in 0..seeds {
        let mut cfg = RunConfig::<Options>::from_seed(seed, 300, Profile::None);
        prepare(&mut cfg);
        let Some(can_show) = reaches(&cfg) else {
            continue;
        };
        let clean = run::<CrashlabDb>(&cfg);
        assert!(
            !clean.outcome.is_violation(),
            "seed {seed}: the twin passes"
        );
        let mut bug = cfg.clone();
        bug.engine = bug.engine.with_control(control).unwrap();
        let r = run::<CrashlabDb>(&bug);
        if !can_show {
            assert_eq!(
                r.trace_hash, clean.trace_hash,
                "{control}, seed {seed}: inert"
            );
            assert_eq!(
                r.image_hash, clean.image_hash,
                "{control}, seed {seed}: inert"
            );
            inert += 1;
            continue;
        }
        reached += 1;
        if let Outcome::Violation(v) = &r.outcome {
            judge(seed, v);
            caught += 1;
        }
    }
    (caught, reached, inert)
}

/// The saved case `corpus/negative/NAME.case` of a seed-drawn dimension's control: it fails;
/// its clean twin (the hook off) passes, and so does the case moved off the draw that reaches
/// the control by `off_the_draw`. Returns the case and its violation.
pub fn saved_case_and_twins(
    name: &str,
    off_the_draw: impl FnOnce(&mut RunConfig<Options>),
) -> (RunConfig<Options>, Violation) {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../corpus/negative")
        .join(format!("{name}.case"));
    let case = Case::<Options>::load(&path).unwrap_or_else(|e| panic!("{e}"));
    let Outcome::Violation(v) = run::<CrashlabDb>(&case.run).outcome else {
        panic!("{name}: the saved case passes");
    };
    let mut clean = case.run.clone();
    clean.engine.debug = Default::default();
    assert!(
        !run::<CrashlabDb>(&clean).outcome.is_violation(),
        "{name}: clean twin"
    );
    let mut off = case.run.clone();
    off_the_draw(&mut off);
    assert!(
        !run::<CrashlabDb>(&off).outcome.is_violation(),
        "{name}: off the draw"
    );
    (case.run, v)
}

/// `cfg` with `control`'s engine hook on.
pub fn with_control(mut cfg: RunConfig<Options>, control: Control) -> RunConfig<Options> {
    cfg.engine = cfg.engine.with_control(control).unwrap();
    cfg
}

/// Of seeds `0..100`, how many draw an operation `drawn` picks out, on an engine with nested
/// buckets and on one with flat buckets (300 operations, crashes allowed).
pub fn seeds_drawing(drawn: impl Fn(&crashlab_sim::op::Op) -> bool) -> (usize, usize) {
    use crashlab_sim::adapter::Capabilities;
    use crashlab_sim::workload::generate;
    let count = |caps: &Capabilities| {
        (0..100)
            .filter(|&seed| generate(seed, 300, true, caps).iter().any(&drawn))
            .count()
    };
    let nested = Capabilities {
        nested_buckets: true,
        ..Capabilities::default()
    };
    (count(&nested), count(&Capabilities::default()))
}
