//! Workloads from the proptest strategy over `Op`: any failure shrinks to a short operation list.

use crashlab_sim::profile::{self, Profile};
use crashlab_sim::runner::{run, Outcome, RunConfig};
use crashlab_sim::strategy;
use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// Under the faults the engine must survive, no workload finds a violation.
    #[test]
    fn no_workload_breaks_the_engine(seed in 0u64..10_000, ops in strategy::workload(150, true)) {
        let cfg = RunConfig {
            engine: Default::default(),
            seed,
            profile: Profile::Default,
            options: profile::engine_options(seed),
            disk: profile::disk_config(seed, Profile::Default),
            ops,
        };
        let r = run(&cfg);
        prop_assert!(!matches!(r.outcome, Outcome::Violation(_)), "{:?}\n{:#?}", r.outcome, r.trace_tail);
    }
}
