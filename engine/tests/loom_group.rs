//! loom model checks of the batch front end (`--cfg kv_loom`; `.ci/run` runs them in their own
//! target dir). Every interleaving of two or three callers, one of whose calls fails: each
//! caller gets exactly one result, each successful call is committed exactly once, the failing
//! one runs solo and is never committed, and no interleaving deadlocks or loses a wake-up
//! (loom reports both).

/// Without the cfg this file has no loom to run: it says so as an ignored test instead of
/// passing with nothing checked.
#[cfg(not(kv_loom))]
#[test]
#[ignore = "loom checks need their own cfg: RUSTFLAGS=\"--cfg kv_loom\" CARGO_TARGET_DIR=target/loom cargo test --release -p crashlab-engine --test loom_group"]
fn loom_checks_run_only_with_cfg_kv_loom() {}

#[cfg(kv_loom)]
mod loom_checks {
    use crashlab_engine::batch::core::BatchOutcome;
    use crashlab_engine::batch::group::{CallResult, GroupCommit};
    use loom::sync::{Arc, Mutex};
    use std::time::Duration;

    fn check(callers: usize, failing: usize) {
        let mut builder = loom::model::Builder::new();
        builder.preemption_bound = Some(3);
        builder.check(move || {
            let group = Arc::new(GroupCommit::<usize>::new(8, Duration::ZERO));
            let committed = Arc::new(Mutex::new(Vec::new()));
            let handles: Vec<_> = (0..callers)
                .map(|n| {
                    let (group, committed) = (group.clone(), committed.clone());
                    loom::thread::spawn(move || {
                        let run = |calls: &[usize]| {
                            if let Some(i) = calls.iter().position(|&c| c == failing) {
                                return (BatchOutcome::CallFailed(i), None);
                            }
                            committed.lock().unwrap().extend_from_slice(calls);
                            (BatchOutcome::Committed, None)
                        };
                        match group.submit(n, &run) {
                            CallResult::Committed => true,
                            CallResult::RunSolo(call) => {
                                assert_eq!(call, n, "a caller gets its own call back");
                                false // running it alone fails again: the caller's own error
                            }
                            CallResult::CommitFailed(m) => panic!("no commit fails here: {m}"),
                        }
                    })
                })
                .collect();
            let results: Vec<bool> = handles.into_iter().map(|h| h.join().unwrap()).collect();
            for (n, ok) in results.iter().enumerate() {
                assert_eq!(*ok, n != failing, "caller {n}");
            }
            let mut log = committed.lock().unwrap().clone();
            log.sort_unstable();
            let want: Vec<usize> = (0..callers).filter(|&n| n != failing).collect();
            assert_eq!(log, want, "every successful call committed exactly once");
        });
    }

    #[test]
    fn two_callers_one_failing() {
        check(2, 0);
        check(2, 1);
    }

    #[test]
    fn three_callers_one_failing() {
        check(3, 1);
    }
}
