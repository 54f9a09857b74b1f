//! Keys of every shape: a seed spells its workload's keys short (`k7`), behind a shared prefix,
//! as composite keys (a tag, a shared middle, the number) or as binary keys with 0x00 and 0xFF
//! bytes, or long, behind a prefix of hundreds to thousands of bytes. Negative control (p),
//! `get-compares-16-bytes`, makes a Get compare only the first 16 bytes of the keys in its leaf:
//! only keys that share 16 bytes show it, which short keys never do, so the seeds of the other
//! shapes run as if it were off. Negative control (t), `branch-frees-first-page`, leaks all but
//! the first page of a rewritten branch of several pages: only long keys make such a branch.
//! The key-limit fragment's 32 KiB keys reach both in any shape, so its seeds of the other
//! shapes are left out of the sweeps below.

use crashlab_engine::Options;
use crashlab_sim::config::RunConfig;
use crashlab_sim::control::Control;
use crashlab_sim::op::{Name, Op};
use crashlab_sim::profile::Profile;
use crashlab_sim::workload::keys::{KeyShape, KEYS};
use std::collections::BTreeMap;

use crate::key_limit::has_limit_keys;
use crate::seeded_control::{saved_case_and_twins, sweep_control};
use crashlab_models::KEY_LEN_MAX;

/// Whether two keys of `shape` share their first 16 bytes.
fn keys_share_16_bytes(shape: &KeyShape) -> bool {
    let mut heads = BTreeMap::new();
    (0..KEYS).any(|n| {
        let key = shape.key(n).0;
        key.len() >= 16 && heads.insert(key[..16].to_vec(), n).is_some()
    })
}

fn put_keys(cfg: &RunConfig<Options>) -> Vec<Vec<u8>> {
    cfg.ops
        .iter()
        .filter_map(|op| match op {
            Op::Put { key, .. } => Some(key.0.clone()),
            _ => None,
        })
        .collect()
}

#[test]
fn the_workload_spells_its_keys_in_the_shape_its_seed_draws() {
    let mut shapes: BTreeMap<&str, u64> = BTreeMap::new();
    for seed in 0..400 {
        let cfg = RunConfig::<Options>::from_seed(seed, 300, Profile::Default);
        let shape = KeyShape::of_seed(seed);
        let universe: Vec<Vec<u8>> = (0..KEYS).map(|n| shape.key(n).0).collect();
        let keys = put_keys(&cfg);
        // Fragmenting bursts put `f0`, `f1`, ..., deep nesting puts `bottom`, the collision
        // fragments put `crossed` and the lifecycle fragments `v0`, `v1`, ... in every shape;
        // every other key is the shape's.
        let extras: Vec<Vec<u8>> = (0..40)
            .map(|i| format!("f{i}").into_bytes())
            .chain((0..10).map(|i| format!("v{i}").into_bytes()))
            .chain([
                b"bottom".to_vec(),
                crashlab_sim::workload::CROSSED.as_bytes().to_vec(),
            ])
            .collect();
        let shaped = keys.iter().filter(|k| universe.contains(k)).count();
        assert!(shaped > 15, "seed {seed}: {shaped} shaped puts");
        let kind = match &shape {
            KeyShape::Short => "short",
            KeyShape::Prefixed { prefix } => {
                assert!(universe.iter().all(|k| k.starts_with(prefix)));
                "prefixed"
            }
            KeyShape::Long { prefix } => {
                assert!(prefix.len() >= 200, "seed {seed}: {} bytes", prefix.len());
                "long"
            }
            KeyShape::Composite { .. } => "composite",
            KeyShape::Binary => {
                assert!(keys.iter().any(|k| k.contains(&0xFF)), "seed {seed}");
                "binary"
            }
        };
        // The key-limit fragment's keys repeat one byte, 32 KiB or one more.
        let limit = |k: &Vec<u8>| k.len() >= KEY_LEN_MAX && k.iter().all(|b| *b == k[0]);
        let known = keys
            .iter()
            .filter(|k| universe.contains(k) || extras.contains(k) || limit(k))
            .count();
        assert_eq!(
            known,
            keys.len(),
            "seed {seed}: every put key is the shape's"
        );
        *shapes.entry(kind).or_default() += 1;
    }
    assert_eq!(shapes.len(), 5, "{shapes:?}");
    assert!(shapes.values().all(|&n| n >= 20), "{shapes:?}");
}

#[test]
fn a_get_comparing_16_bytes_is_caught_on_long_keys_only_and_the_twin_passes() {
    // Short keys (what every seed had before key shapes) cannot show it.
    let long_keys = |cfg: &RunConfig<Options>| {
        by_shape_alone(cfg, keys_share_16_bytes(&KeyShape::of_seed(cfg.seed)))
    };
    let (caught, long, inert) =
        sweep_control(160, Control::GetCompares16Bytes, long_keys, |_, _| {});
    assert!(inert >= 80, "{inert} seeds without long shared keys");
    assert!(long >= 10, "{long} seeds with long shared keys");
    assert!(caught * 2 >= long, "{caught} of {long} caught");
}

/// The saved case of control (p) fails; its clean twin passes, and so does the same case with
/// the keys every seed had before key shapes (`k2`, `k4`).
#[test]
fn the_saved_get_compares_16_bytes_case_fails_only_with_long_keys() {
    saved_case_and_twins("get-compares-16-bytes", |run| {
        respell_keys(run, |key| vec![b'k', *key.last().unwrap()]);
    });
}

/// Spell every key the case's puts, gets and deletes name as `respell` says: a saved case
/// moved off the key shape that reaches its control.
fn respell_keys(run: &mut RunConfig<Options>, respell: impl Fn(&[u8]) -> Vec<u8>) {
    for op in &mut run.ops {
        if let Op::Put { key, .. } | Op::Get { key, .. } | Op::Delete { key, .. } = op {
            *key = Name::new(respell(&key.0));
        }
    }
}

/// Whether the seed's keys are long.
fn long_keys(cfg: &RunConfig<Options>) -> Option<bool> {
    by_shape_alone(
        cfg,
        matches!(KeyShape::of_seed(cfg.seed), KeyShape::Long { .. }),
    )
}

/// `shaped`, whether the seed's key shape reaches a control, for a seed whose keys alone decide
/// it; `None` (the seed is left out) where the shape does not reach it but the key-limit
/// fragment's 32 KiB keys may: how often those catch it is not the shape's doing.
fn by_shape_alone(cfg: &RunConfig<Options>, shaped: bool) -> Option<bool> {
    (shaped || !has_limit_keys(cfg)).then_some(shaped)
}

#[test]
fn a_branch_freeing_its_first_page_only_is_caught_on_long_keys_only_and_the_twin_passes() {
    // Keys of at most 44 bytes never fill a branch page with two separators.
    let (caught, long, inert) =
        sweep_control(200, Control::BranchFreesFirstPage, long_keys, |seed, v| {
            assert!(
                v.detail.contains("unreachable and not free"),
                "seed {seed}: {v}"
            );
        });
    assert!(inert >= 150, "{inert} seeds without long keys");
    assert!(long >= 10, "{long} seeds with long keys");
    assert!(caught * 3 >= long, "{caught} of {long} caught");
}

/// The saved case of control (t) fails; its clean twin passes, and so does the same case with
/// its keys' long prefix cut off (`k…` alone, as a short-key seed spells them).
#[test]
fn the_saved_branch_frees_first_page_case_fails_only_with_long_keys() {
    saved_case_and_twins("branch-frees-first-page", |run| {
        respell_keys(run, |key| {
            let at = key.iter().rposition(|&b| b == b'k').unwrap();
            key[at..].to_vec()
        });
    });
}
