//! The crash states of the metadata: prefixes under `ordered`, every consistent subset under
//! `strict`, each materialisable, and the seeded cuts landing on them.

use super::*;
use crate::rng::SimRng;
use std::collections::BTreeSet;

fn subsets(lists: &[&[usize]]) -> BTreeSet<MetaSubset> {
    lists.iter().map(|l| MetaSubset::new(l.to_vec())).collect()
}

/// `a` durable; pending: 0 create `b`, 1 create `c`, 2 rename `b` over `a`.
fn three_ops(seed: u64, model: MetaModel) -> SimFs {
    let fs = fs_with(seed, model);
    fs.create("a").unwrap();
    fs.sync_dir().unwrap();
    fs.create("b").unwrap();
    fs.create("c").unwrap();
    fs.rename("b", "a").unwrap();
    fs
}

#[test]
fn ordered_gives_the_prefixes_strict_every_consistent_subset() {
    let ordered = three_ops(1, MetaModel::Ordered);
    let states: BTreeSet<MetaSubset> = ordered.meta_crash_states().unwrap().into_iter().collect();
    assert_eq!(states, subsets(&[&[], &[0], &[0, 1], &[0, 1, 2]]));
    let strict = three_ops(1, MetaModel::Strict);
    let states = strict.meta_crash_states().unwrap();
    assert_eq!(states.len(), 6, "each once: {states:?}");
    // The rename needs `b`'s create: {2} and {1, 2} are not consistent.
    let want = subsets(&[&[], &[0], &[1], &[0, 1], &[0, 2], &[0, 1, 2]]);
    assert_eq!(states.iter().cloned().collect::<BTreeSet<_>>(), want);
    let (a, b, c) = (FileId(0), FileId(1), FileId(2));
    let dir = |names: &[(&str, FileId)]| -> Directory {
        names.iter().map(|(n, f)| (n.to_string(), *f)).collect()
    };
    let expected = [
        (vec![], dir(&[("a", a)])),
        (vec![0], dir(&[("a", a), ("b", b)])),
        (vec![1], dir(&[("a", a), ("c", c)])),
        (vec![0, 1], dir(&[("a", a), ("b", b), ("c", c)])),
        (vec![0, 2], dir(&[("a", b)])),
        (vec![0, 1, 2], dir(&[("a", b), ("c", c)])),
    ];
    for (kept, want) in expected {
        let got = strict
            .directory_after(&MetaSubset::new(kept.clone()))
            .unwrap();
        assert_eq!(got, want, "strict keeping {kept:?}");
    }
}

#[test]
fn a_subset_the_model_forbids_is_refused_and_changes_nothing() {
    let ordered = three_ops(1, MetaModel::Ordered);
    let e = ordered
        .directory_after(&MetaSubset::new(vec![1]))
        .unwrap_err();
    assert!(e.contains("not a prefix"), "{e}");
    let strict = three_ops(1, MetaModel::Strict);
    let e = strict
        .directory_after(&MetaSubset::new(vec![2]))
        .unwrap_err();
    assert!(e.contains("operation 2") && e.contains("moot"), "{e}");
    let e = strict
        .directory_after(&MetaSubset::new(vec![3]))
        .unwrap_err();
    assert!(e.contains("only 3 are pending"), "{e}");
    let e = strict
        .crash_with(&MetaSubset::new(vec![2]), &mut |_, _| true)
        .unwrap_err();
    assert!(e.contains("moot"), "{e}");
    assert_eq!(
        strict.pending_meta().len(),
        3,
        "a refused crash changes nothing"
    );
    assert_eq!(strict.counts().crashes, 0);
}

#[test]
fn crash_with_materialises_the_chosen_state() {
    for model in MetaModel::ALL {
        let probe = three_ops(1, model);
        for subset in probe.meta_crash_states().unwrap() {
            let fs = three_ops(1, model);
            let f = fs.open("c").unwrap();
            f.write_at(0, b"pending").unwrap();
            let want = fs.directory_after(&subset).unwrap();
            let cut = fs.crash_with(&subset, &mut |_, _| true).unwrap();
            assert_eq!(cut.kept, subset);
            assert_eq!(fs.directory(), want, "{model} {subset}");
            assert_eq!(fs.durable_directory(), want);
            if want.contains_key("c") {
                assert_eq!(content(&fs, "c").unwrap(), b"", "length 0 was durable");
            }
        }
    }
}

/// A random history of `n` metadata operations over four names, none of it synced.
fn random_history(seed: u64, n: usize, model: MetaModel) -> SimFs {
    let fs = fs_with(seed, model);
    fs.create("n0").unwrap();
    fs.sync_dir().unwrap();
    let mut rng = SimRng::new(seed);
    let names = ["n0", "n1", "n2", "n3"];
    while fs.pending_meta().len() < n {
        let (x, y) = (*rng.pick(&names), *rng.pick(&names));
        let _ = match rng.below(3) {
            0 => fs.create(x).map(drop),
            1 => fs.rename(x, y),
            _ => fs.delete(x),
        };
    }
    fs
}

#[test]
fn strict_enumeration_matches_a_brute_force_over_every_subset() {
    for seed in 0..20 {
        let fs = random_history(seed, 8, MetaModel::Strict);
        let (durable, pending) = (fs.durable_directory(), fs.pending_meta());
        let brute: BTreeSet<MetaSubset> = (0u32..1 << pending.len())
            .map(|mask| {
                MetaSubset::new((0..pending.len()).filter(|i| mask >> i & 1 == 1).collect())
            })
            .filter(|s| replay(&durable, &pending, s, MetaModel::Strict).is_ok())
            .collect();
        let listed = fs.meta_crash_states().unwrap();
        assert_eq!(listed.len(), brute.len(), "seed {seed}: each state once");
        assert_eq!(
            listed.into_iter().collect::<BTreeSet<_>>(),
            brute,
            "seed {seed}"
        );
    }
}

#[test]
fn seeded_cuts_land_on_enumerated_states_and_reach_every_one() {
    for model in MetaModel::ALL {
        let states: BTreeSet<MetaSubset> = random_history(7, 6, model)
            .meta_crash_states()
            .unwrap()
            .into_iter()
            .collect();
        let mut reached = BTreeSet::new();
        for seed in 0..600 {
            let fs = random_history(7, 6, model);
            // A different seed for the cut: the same history, another metadata stream.
            let fs = rebuilt_with_seed(&fs, seed);
            let cut = fs.crash();
            assert!(
                states.contains(&cut.kept),
                "{model}: {} not enumerated",
                cut.kept
            );
            if model == MetaModel::Ordered {
                assert!(cut.kept.is_prefix(), "{}", cut.kept);
            }
            reached.insert(cut.kept);
        }
        assert_eq!(
            reached, states,
            "{model}: every state is reachable by a seeded cut"
        );
    }
}

/// The same history as `fs` (built from seed 7 of `random_history`), on a file system seeded
/// with `seed`: the history's choices come from its own stream, the cut from the file system's.
fn rebuilt_with_seed(fs: &SimFs, seed: u64) -> SimFs {
    let model = fs.config().model;
    let out = fs_with(seed, model);
    for name in fs.durable_directory().keys() {
        out.create(name).unwrap();
    }
    out.sync_dir().unwrap();
    for op in fs.pending_meta() {
        match op {
            MetaOp::Create { name, .. } => drop(out.create(&name).unwrap()),
            MetaOp::Rename { from, to, .. } => out.rename(&from, &to).unwrap(),
            MetaOp::Delete { name, .. } => out.delete(&name).unwrap(),
        }
    }
    assert_eq!(out.pending_meta().len(), fs.pending_meta().len());
    out
}

#[test]
fn strict_enumeration_is_bounded_ordered_is_not() {
    let many = |model| {
        let fs = fs_with(1, model);
        for i in 0..=STRICT_ENUMERATION_OPS_MAX {
            fs.create(&format!("f{i}")).unwrap();
        }
        fs
    };
    let e = many(MetaModel::Strict).meta_crash_states().unwrap_err();
    assert!(e.contains("17 pending") && e.contains("above 16"), "{e}");
    assert_eq!(
        many(MetaModel::Ordered).meta_crash_states().unwrap().len(),
        18
    );
}
