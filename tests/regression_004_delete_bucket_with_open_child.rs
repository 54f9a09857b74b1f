//! Regression 004, found by the crash-state checker's recorded run (`crashlab check`).
//!
//! Postmortem: deleting bucket `a` frees every page of `a` and of its sub-buckets. When `a` had
//! been opened in the transaction, the engine walked `a`'s stored pages — freeing each stored
//! sub-bucket it found there — and then freed the sub-buckets opened in the transaction as well.
//! A sub-bucket that was both stored and opened (`a/x`, opened by a put) was freed twice, and
//! the commit failed with "freed twice: the tree references it more than once" on a perfectly
//! valid database. The stored walk skipped opened sub-buckets only when `a`'s root was already
//! in memory, not when it was still a page. The simulator never reported it because its runner
//! treats every failed commit as a fault the application restarts from; the checker's recorded
//! run has no faults, so any failed commit is a finding. The fix skips opened sub-buckets in the
//! stored walk too. The case is also replayed from `corpus/regressions/` by the corpus test.

use crashlab_check::{CheckConfig, Replayed};
use crashlab_engine::{Db, MemStorage, Options};
use crashlab_sim::case::Case;
use crashlab_sim::crashlab::CrashlabDb;

fn replay(cfg: &CheckConfig<Options>, state: &crashlab_sim::spec::CrashState) -> Replayed {
    crashlab_check::replay::<CrashlabDb>(cfg, state)
}
use std::path::Path;

#[test]
fn deleting_a_bucket_whose_sub_bucket_was_opened_frees_each_page_once() {
    let opts = Options {
        page_size: 512,
        ..Options::default()
    };
    let db = Db::open(MemStorage::new(), opts).unwrap();
    db.update(|tx| {
        let mut a = tx.create_bucket(b"a")?;
        a.create_bucket(b"x")?.put(b"k38", &[7u8; 552])
    })
    .unwrap();
    db.update(|tx| {
        tx.bucket_path_mut(&[b"a", b"x"])?
            .expect("a/x exists")
            .put(b"k0", b"v")?;
        tx.delete_bucket(b"a")
    })
    .unwrap();
    assert!(db.view(|tx| Ok(tx.bucket(b"a")?.is_none())).unwrap());
    assert!(db.check().unwrap().is_empty());
}

#[test]
fn the_checker_case_replays_clean() {
    let file = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("corpus/regressions/004-delete-bucket-with-open-child.case");
    let case = Case::<Options>::load(&file).unwrap();
    let state = case
        .crash_state
        .clone()
        .expect("the case names the live failure");
    assert_eq!(
        replay(&CheckConfig::from_case(&case), &state),
        Replayed::Clean
    );
}
