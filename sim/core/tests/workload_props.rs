//! Workloads from the proptest strategy over `Op`: any failure shrinks to a short operation list.

use crashlab_engine::Options;
use crashlab_sim::adapter::EngineConfig;
use crashlab_sim::config::{AfterFailure, RunConfig};
use crashlab_sim::crashlab::CrashlabDb;
use crashlab_sim::profile::{self, Profile};
use crashlab_sim::runner::run;
use crashlab_sim::strategy;
use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// Under the faults the engine must survive, no workload finds a violation.
    #[test]
    fn no_workload_breaks_the_engine(seed in 0u64..10_000, ops in strategy::workload(150, true)) {
        let cfg = RunConfig {
            seed,
            profile: Profile::Default,
            disk: profile::disk_config(seed, Profile::Default),
            ops,
            engine: Options::from_seed(seed, Profile::Default),
            after_failure: AfterFailure::from_seed(seed),
            pinned_cut: None,
            fs: Default::default(),
            switch_settings: false,
        };
        let r = run::<CrashlabDb>(&cfg);
        prop_assert!(!r.outcome.is_violation(), "{:?}\n{:#?}", r.outcome, r.trace_tail);
    }
}
