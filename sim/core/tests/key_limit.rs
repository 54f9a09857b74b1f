//! Keys and bucket names at the engine's size limit. The drawn keys are at most 3,003 bytes, a
//! tenth of the limit, so before the workload's key-limit fragment no seed met it. Negative
//! control (af), `key-limit-one-short`, refuses a name of exactly the limit: the model takes it,
//! so the refusal is a mismatch at the put or the bucket's creation.

use crashlab_engine::Options;
use crashlab_models::KEY_LEN_MAX;
use crashlab_sim::config::RunConfig;
use crashlab_sim::control::Control;
use crashlab_sim::op::{Name, Op};
use crashlab_sim::profile::Profile;
use crashlab_sim::verdict::{Verdict, Violation};

use crate::seeded_control::{saved_case_and_twins, seeds_drawing, sweep_control, sweep_control_on};

/// The names `op` writes under: a put's key and its path's names (what the limit applies to).
fn names_mut(op: &mut Op) -> Vec<&mut Name> {
    match op {
        Op::Put { path, key, .. } => path.iter_mut().chain(std::iter::once(key)).collect(),
        Op::CreateBucket(path) => path.iter_mut().collect(),
        _ => Vec::new(),
    }
}

fn names_a_limit_key(op: &Op) -> bool {
    names_mut(&mut op.clone())
        .iter()
        .any(|n| n.0.len() == KEY_LEN_MAX)
}

/// Whether the run's workload holds the key-limit fragment: keys of 32 KiB reach what long keys
/// reach (a branch of several pages, keys that share their first bytes), whatever the seed's
/// key shape.
pub fn has_limit_keys(cfg: &RunConfig<Options>) -> bool {
    cfg.ops.iter().any(names_a_limit_key)
}

/// Every name of exactly the limit one byte shorter (a name past it stays past it).
fn one_byte_shorter(cfg: &mut RunConfig<Options>) {
    for op in &mut cfg.ops {
        for name in names_mut(op) {
            if name.0.len() == KEY_LEN_MAX {
                name.0.pop();
            }
        }
    }
}

/// The violation is the engine's refusal of a name the model takes, at an operation that names
/// one of exactly the limit.
fn caught_at_the_limit(ops: &[Op], v: &Violation) {
    assert_eq!(v.verdict, Verdict::ModelMismatch, "{v}");
    assert!(names_a_limit_key(&ops[v.op_index]), "{v}");
    assert!(v.detail.contains("engine refused KeyTooLarge"), "{v}");
}

#[test]
fn the_saved_case_is_caught_at_the_limit_name_and_its_twins_pass() {
    let (run, v) = saved_case_and_twins("key-limit-one-short", one_byte_shorter);
    caught_at_the_limit(&run.ops, &v);
}

#[test]
fn seeds_that_put_limit_keys_are_caught_by_the_refusal() {
    let (caught, reached, _) = sweep_control(
        240,
        Control::KeyLimitOneShort,
        |cfg| has_limit_keys(cfg).then_some(true),
        |seed, v| {
            let cfg = RunConfig::<Options>::from_seed(seed, 300, Profile::None);
            caught_at_the_limit(&cfg.ops, v);
        },
    );
    assert!(
        reached >= 15,
        "{reached} of 240 seeds name a key at the limit"
    );
    assert!(
        caught * 10 >= reached * 9,
        "caught on {caught} of {reached}"
    );
}

#[test]
fn one_byte_under_the_limit_the_control_changes_nothing() {
    // The same seeds with each limit name one byte shorter (names past the limit stay, refused
    // by the engine and the model alike): the control must leave each run's trace and image as
    // the clean run's, so what it catches is the boundary itself.
    let under = |op: &Op| {
        let mut op = op.clone();
        names_mut(&mut op)
            .iter()
            .any(|n| n.0.len() == KEY_LEN_MAX - 1)
    };
    let (caught, reached, inert) = sweep_control_on(
        240,
        Control::KeyLimitOneShort,
        one_byte_shorter,
        |cfg| cfg.ops.iter().any(under).then_some(false),
        |seed, v| panic!("seed {seed}: {v}"),
    );
    assert_eq!((caught, reached), (0, 0));
    assert!(
        inert >= 15,
        "{inert} of 240 seeds name a key under the limit"
    );
}

#[test]
fn only_engines_that_declare_the_limit_are_given_limit_keys() {
    let past = |op: &Op| {
        let mut op = op.clone();
        names_mut(&mut op).iter().any(|n| n.0.len() > KEY_LEN_MAX)
    };
    // `seeds_drawing` generates for engines without a declared limit: none is given a name
    // past it (nor at it, which would be harmless but says nothing about their limit).
    assert_eq!(seeds_drawing(past), (0, 0));
    assert_eq!(seeds_drawing(names_a_limit_key), (0, 0));
}
