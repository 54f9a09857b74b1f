//! Regression 019, found on 2026-12-04 while shrinking the first violating seed of
//! `explore --profile scale --control merge-keeps-branch-separator`: `crashlab repro` of the case
//! the sweep had saved ran Ok, where the sweep had reported a violation.
//!
//! Postmortem: a sweep saves a violating seed's case without its operations, as `ops = N`, to be
//! regenerated from the seed. It wrote N as the run's whole operation count, and the loader
//! regenerated N operations of the seed's workload. Under `scale` the run's operations are the
//! seed's 300 plus its scale patterns, so the replay ran thousands of the seed's ordinary
//! operations and none of its scale patterns: another workload, which did not reach the bug.
//! Every scale violation `explore` ever saved replayed so, and no test saved a scale case (the
//! round-trip test of case files used the default profile, where the two counts agree). The fix
//! makes `ops = N` mean what `RunConfig::from_seed` means by N (the seed's workload, with the
//! profile's scale patterns on top), writes the N that regenerates the run's operations, and
//! writes the operations out whenever no N does.

use crashlab_engine::Options;
use crashlab_sim::case::{Case, Expect};
use crashlab_sim::config::RunConfig;
use crashlab_sim::profile::Profile;

#[test]
fn a_case_saved_from_a_scale_seed_loads_the_same_operations() {
    for seed in 0..4 {
        let case = Case {
            run: RunConfig::<Options>::from_seed(seed, 300, Profile::Scale),
            expect: Expect::Violation,
            explicit_ops: false,
            check: None,
            crash_state: None,
        };
        assert!(
            case.run.ops.len() > 300,
            "seed {seed}: scale patterns added"
        );
        let text = case.to_text();
        assert!(
            text.contains("\nops = 300\n"),
            "seed {seed}: the seed's count"
        );
        let back = Case::<Options>::parse(&text, "t.case").unwrap();
        assert_eq!(back.run.ops.len(), case.run.ops.len(), "seed {seed}");
        assert!(
            back.run == case.run,
            "seed {seed}: the replay runs another workload"
        );
    }
}

/// Operations no count regenerates (here the run's eleventh dropped, as a hand edit or a
/// shrink would) are written out, under any profile.
#[test]
fn a_case_whose_operations_no_seed_count_gives_is_saved_with_them() {
    for profile in [Profile::Default, Profile::Scale] {
        let mut run = RunConfig::<Options>::from_seed(2, 300, profile);
        run.ops.remove(10);
        let case = Case {
            run,
            expect: Expect::Violation,
            explicit_ops: false,
            check: None,
            crash_state: None,
        };
        let text = case.to_text();
        assert!(
            text.contains("\n[ops]\n"),
            "{profile}: operations written out"
        );
        let back = Case::<Options>::parse(&text, "t.case").unwrap();
        assert!(back.run == case.run, "{profile}: the same operations");
    }
}
