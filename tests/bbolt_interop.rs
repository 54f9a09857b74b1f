//! bbolt itself reads files our engine wrote: it opens each, runs `Check()`, and dumps every
//! bucket, key, value and sequence, which must equal what the test put.
//!
//! Needs Go and Debian's bbolt package, so it is `#[ignore]`d: a plain `cargo test` lists it as
//! ignored, never as passed. Run it with `bash tools/bbolt/install.sh`, then
//! `cargo test --test suite bbolt_interop:: -- --ignored`; `.ci/run` does both and fails when the
//! toolchain cannot be installed.

use crate::common;

use crashlab_engine::{Db, FreelistKind, Options};
use crashlab_models::KvModel;
use std::path::{Path, PathBuf};
use std::process::Command;

fn write_db(path: &Path, options: Options) -> KvModel {
    let mut m = KvModel::new();
    let db = Db::open_path(path, options).unwrap();
    let p = |names: &[&str]| {
        names
            .iter()
            .map(|n| n.as_bytes().to_vec())
            .collect::<Vec<_>>()
    };
    db.update(|tx| {
        // A big paged bucket, a nested chain, an inline bucket, an empty one, overflow values.
        let mut big = tx.create_bucket(b"big")?;
        m.create_bucket(&p(&["big"])).unwrap();
        for i in 0..3000u32 {
            let (k, v) = (
                format!("k{i:05}"),
                vec![(i % 251) as u8; (i % 300) as usize],
            );
            big.put(k.as_bytes(), &v)?;
            m.put(&p(&["big"]), k.as_bytes(), &v).unwrap();
        }
        for (i, n) in [1usize, 5000, 70_000].into_iter().enumerate() {
            let v = vec![i as u8 + 1; n];
            big.put(format!("overflow{i}").as_bytes(), &v)?;
            m.put(&p(&["big"]), format!("overflow{i}").as_bytes(), &v)
                .unwrap();
        }
        let mut l1 = big.create_bucket(b"l1")?;
        let mut l2 = l1.create_bucket(b"l2")?;
        l2.put(&[0, 255, 7], b"binary")?;
        l2.set_sequence(42);
        m.create_bucket(&p(&["big", "l1"])).unwrap();
        m.create_bucket(&p(&["big", "l1", "l2"])).unwrap();
        m.put(&p(&["big", "l1", "l2"]), &[0, 255, 7], b"binary")
            .unwrap();
        m.bucket_mut(&p(&["big", "l1", "l2"])).unwrap().sequence = 42;
        tx.create_bucket(b"inline")?.put(b"small", b"value")?;
        m.create_bucket(&p(&["inline"])).unwrap();
        m.put(&p(&["inline"]), b"small", b"value").unwrap();
        tx.create_bucket(b"empty")?;
        m.create_bucket(&p(&["empty"])).unwrap();
        Ok(())
    })
    .unwrap();
    // Delete most of the big bucket so the freelist is large and fragmented.
    db.update(|tx| {
        let mut big = tx.bucket_mut(b"big")?.unwrap();
        for i in (0..3000u32).filter(|i| i % 5 != 0) {
            let k = format!("k{i:05}");
            big.delete(k.as_bytes())?;
            m.delete(&p(&["big"]), k.as_bytes()).unwrap();
        }
        Ok(())
    })
    .unwrap();
    assert_eq!(db.check().unwrap(), vec![]);
    m
}

fn expected(m: &KvModel, page_size: u32) -> common::Dump {
    let mut d = common::Dump {
        page_size,
        ..common::Dump::default()
    };
    for (path, b) in m.flatten() {
        let path = path
            .iter()
            .map(|n| common::hex(n))
            .collect::<Vec<_>>()
            .join("/");
        let keys = b
            .values
            .iter()
            .map(|(k, v)| (common::hex(k), common::hex(v)))
            .collect();
        if b.sequence != 0 {
            d.sequences.insert(path.clone(), b.sequence);
        }
        d.buckets.insert(path, keys);
    }
    d
}

#[test]
#[ignore = "needs Go and Debian's bbolt: bash tools/bbolt/install.sh, then cargo test --test suite bbolt_interop:: -- --ignored"]
fn bbolt_opens_checks_and_dumps_our_files() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let dir = tempfile::tempdir().unwrap();
    let configs = [
        ("default", Options::default()),
        (
            "hashmap",
            Options {
                freelist: FreelistKind::Hashmap,
                ..Options::default()
            },
        ),
        (
            "nofreelist",
            Options {
                no_freelist_sync: true,
                ..Options::default()
            },
        ),
        (
            "page1k",
            Options {
                page_size: 1024,
                ..Options::default()
            },
        ),
        (
            "page64k",
            Options {
                page_size: 65536,
                ..Options::default()
            },
        ),
    ];
    let mut files = Vec::new();
    let mut models = Vec::new();
    for (name, opts) in configs {
        let path = dir.path().join(format!("{name}.db"));
        models.push((
            expected(&write_db(&path, opts.clone()), opts.page_size),
            name,
        ));
        files.push(path);
    }
    let out = Command::new("bash")
        .arg(root.join("tools/bbolt/run.sh"))
        .arg("check")
        .args(&files)
        .output()
        .expect("run tools/bbolt/run.sh");
    let stdout = String::from_utf8(out.stdout).unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "bbolt rejected a file:\n{stderr}\n{stdout}"
    );
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), files.len(), "{stderr}");
    for (line, (want, name)) in lines.iter().zip(&models) {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        assert_eq!(
            v["check_errors"].as_array().map(Vec::len),
            Some(0),
            "{name}: {line}"
        );
        let got = common::parse_dump(line);
        assert_eq!(
            &got, want,
            "{name}: bbolt's dump differs from what we wrote"
        );
    }
}
