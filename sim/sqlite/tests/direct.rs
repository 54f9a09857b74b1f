//! The adapter opened directly on a SimDir (no runner): every mode creates, commits, reads back
//! after a clean close, and recovers to a committed state after a power cut.

use crashlab_sim::adapter::{Ack, Engine, SimDir};
use crashlab_sim::disk::DiskConfig;
use crashlab_sim::fs::{FsConfig, SimFs};
use crashlab_sim::op::{Name, Op};
use crashlab_sim::power::PowerSwitch;
use crashlab_sqlite::{Journal, SqliteChoices, SqliteDb, Synchronous};

fn put(key: &str, version: u32) -> Op {
    Op::Put {
        path: vec![Name::new("b")],
        key: Name::new(key),
        len: 100,
        version,
    }
}

fn commit(db: &SqliteDb, ops: &[Op]) -> Ack {
    let mut w = db.begin_write().unwrap();
    for op in ops {
        SqliteDb::apply(&mut w, op).unwrap();
    }
    db.commit(w).unwrap()
}

fn all_modes() -> Vec<SqliteChoices> {
    let mut out = Vec::new();
    for journal in Journal::ON {
        for synchronous in Synchronous::ON {
            out.push(SqliteChoices {
                journal,
                synchronous,
            });
        }
    }
    out
}

#[test]
fn every_mode_commits_and_reads_back_after_a_clean_close() {
    for cfg in all_modes() {
        let fs = SimFs::new(1, DiskConfig::default(), FsConfig::default());
        let dir = SimDir::new(fs.clone(), PowerSwitch::new());
        let db = SqliteDb::open_dir(dir.clone(), &cfg, 0).unwrap();
        commit(&db, &[Op::CreateBucket(vec![Name::new("b")]), put("k1", 1)]);
        commit(&db, &[put("k2", 2)]);
        assert_eq!(
            db.scan(&vec![Name::new("b")]).unwrap().unwrap().len(),
            2,
            "{cfg}"
        );
        db.close().unwrap();
        let names = fs.list();
        assert!(names.contains(&"db".to_string()), "{cfg}: {names:?}");
        if cfg.journal == Journal::Wal {
            assert!(
                !names.contains(&"db-wal".to_string()),
                "{cfg}: a clean close checkpoints: {names:?}"
            );
        }
        let mut db = SqliteDb::open_dir(dir, &cfg, 1).unwrap();
        let got = db.get(&vec![Name::new("b")], &Name::new("k2")).unwrap();
        assert_eq!(got.map(|v| v.len()), Some(100), "{cfg}");
        assert_eq!(db.check().unwrap(), Vec::<String>::new(), "{cfg}");
    }
}

#[test]
fn every_mode_recovers_to_a_committed_state_after_a_power_cut() {
    for cfg in all_modes() {
        let fs = SimFs::new(3, DiskConfig::default(), FsConfig::default());
        let power = PowerSwitch::new();
        let dir = SimDir::new(fs.clone(), power.clone());
        let db = SqliteDb::open_dir(dir.clone(), &cfg, 0).unwrap();
        commit(&db, &[Op::CreateBucket(vec![Name::new("b")]), put("k1", 1)]);
        let mut w = db.begin_write().unwrap();
        SqliteDb::apply(&mut w, &put("k2", 2)).unwrap();
        power.cut();
        assert!(db.commit(w).is_err(), "{cfg}: commit with the power off");
        drop(db);
        fs.crash();
        power.reset();
        let mut db = SqliteDb::open_dir(dir, &cfg, 1).unwrap();
        assert_eq!(db.check().unwrap(), Vec::<String>::new(), "{cfg}");
        let k2 = db.get(&vec![Name::new("b")], &Name::new("k2")).unwrap();
        assert_eq!(k2, None, "{cfg}: the uncommitted put is gone");
    }
}
