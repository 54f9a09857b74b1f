//! `crashlab db` as a user meets it: the bbolt fixtures dumped exactly, damaged copies checked,
//! unreadable files refused with exit code 2, and a simulator disk image inspected.

use crashlab_engine::{Db, FileStorage, Options};
use crashlab_format::inspect::{self, Image, PageBody, PageRun, PageUse};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn fixture(name: &str) -> PathBuf {
    root().join("corpus/bbolt").join(name)
}

fn db(args: &[&str], file: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_crashlab"))
        .arg("db")
        .args(args)
        .arg(file)
        .output()
        .unwrap()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn json(text: &str) -> serde_json::Value {
    serde_json::from_str(text).expect("valid JSON")
}

/// A 512-byte-page file with branch levels, overflow, nested and inline buckets and free pages.
fn sample(path: &Path) {
    let options = Options {
        page_size: 512,
        ..Options::default()
    };
    let db = Db::open_path(path, options).unwrap();
    db.update(|tx| {
        let mut a = tx.create_bucket(b"a")?;
        for i in 0..300u32 {
            a.put(format!("key{i:04}").as_bytes(), &[i as u8; 30])?;
        }
        a.put(b"big", &[9; 3000])?;
        a.create_bucket(b"nested")?.put(b"x", b"y")?;
        tx.create_bucket(b"small")?.put(b"s", b"t")?;
        Ok(())
    })
    .unwrap();
    db.update(|tx| {
        let mut a = tx.bucket_mut(b"a")?.unwrap();
        for i in (0..300u32).step_by(3) {
            a.delete(format!("key{i:04}").as_bytes())?;
        }
        Ok(())
    })
    .unwrap();
}

fn open_image(path: &Path) -> Image {
    Image::open(FileStorage::open_read_only(path).unwrap()).unwrap()
}

fn patch(path: &Path, offset: u64, bytes: &[u8]) {
    let mut file = std::fs::read(path).unwrap();
    file[offset as usize..offset as usize + bytes.len()].copy_from_slice(bytes);
    std::fs::write(path, file).unwrap();
}

#[test]
fn dump_json_of_every_bbolt_fixture_equals_its_expected_contents() {
    let mut seen = 0;
    for entry in std::fs::read_dir(root().join("corpus/bbolt")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "db") {
            continue;
        }
        let o = db(&["dump", "--json"], &path);
        assert_eq!(
            o.status.code(),
            Some(0),
            "{}: {}",
            path.display(),
            stderr(&o)
        );
        let want = std::fs::read_to_string(path.with_extension("json")).unwrap();
        assert!(
            json(&stdout(&o)) == json(&want),
            "{}: dump differs from its .json",
            path.display()
        );
        seen += 1;
    }
    assert_eq!(seen, 7, "every fixture");
}

#[test]
fn info_check_pages_stats_and_dump_on_a_fixture() {
    let file = fixture("nested.db");
    let o = db(&["info"], &file);
    let t = stdout(&o);
    assert_eq!(o.status.code(), Some(0), "{t}");
    for needle in [
        "page size   4096",
        "in use      meta",
        "checksum ok",
        "txid",
    ] {
        assert!(t.contains(needle), "missing `{needle}` in:\n{t}");
    }
    let o = db(&["check"], &file);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    assert!(stdout(&o).ends_with("OK\n"), "{}", stdout(&o));
    let o = db(&["pages"], &file);
    let t = stdout(&o);
    assert_eq!(o.status.code(), Some(0), "{t}");
    assert!(t.starts_with("ID"), "{t}");
    for needle in [
        "meta",
        "freelist",
        "branch",
        "leaf",
        "alpha/level2/level3",
        "0x00ff62696e",
    ] {
        assert!(t.contains(needle), "missing `{needle}` in pages");
    }
    let o = db(&["stats"], &file);
    let t = stdout(&o);
    assert_eq!(o.status.code(), Some(0), "{t}");
    for needle in [
        "FILL",
        "free set",
        "inline",
        "alpha/level2/level3/level4",
        "1099511627783",
    ] {
        assert!(t.contains(needle), "missing `{needle}` in:\n{t}");
    }
    let o = db(&["dump"], &fixture("inline.db"));
    let t = stdout(&o);
    assert_eq!(o.status.code(), Some(0), "{t}");
    assert!(
        t.contains("bucket small (") && t.contains("sequence 2"),
        "{t}"
    );
    assert!(t.contains("bucket empty (0 keys)"), "{t}");
}

#[test]
fn page_shows_one_page_in_full() {
    let file = fixture("inline.db");
    let map = inspect::page_map(&open_image(&file)).unwrap();
    let leaf = map.runs.iter().find(|r| r.kind == PageUse::Leaf).unwrap();
    let o = db(&["pages", "--page", &leaf.start.to_string()], &file);
    let t = stdout(&o);
    assert_eq!(o.status.code(), Some(0), "{t}");
    assert!(
        t.contains("flags 0x0002") && t.contains("used as: leaf"),
        "{t}"
    );
    assert!(t.contains("key"), "{t}");
    let o = db(&["pages", "--page", "0"], &file);
    assert!(stdout(&o).contains("meta (valid)"), "{}", stdout(&o));
    let o = db(&["pages", "--page", "99999999"], &file);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("past the end of the file"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn unreadable_files_exit_2_with_the_file_and_the_reason() {
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("empty.db");
    std::fs::write(&empty, b"").unwrap();
    let garbage = dir.path().join("garbage.db");
    std::fs::write(&garbage, vec![0x5A; 8192]).unwrap();
    let truncated = dir.path().join("truncated.db");
    let whole = std::fs::read(fixture("nofreelist.db")).unwrap();
    std::fs::write(&truncated, &whole[..whole.len() / 2]).unwrap();
    let cases = [
        (dir.path().join("missing.db"), "no such file"),
        (dir.path().to_path_buf(), "is a directory"),
        (empty, "the file is empty"),
        (garbage, "not a database file"),
        (truncated, "truncated"),
    ];
    for (file, reason) in &cases {
        for cmd in [
            &["info"][..],
            &["check"],
            &["pages"],
            &["stats"],
            &["dump", "--json"],
        ] {
            let o = db(cmd, file);
            let e = stderr(&o);
            assert_eq!(o.status.code(), Some(2), "{cmd:?} {}: {e}", file.display());
            assert!(
                e.contains(&file.display().to_string()) && e.contains(reason),
                "{e}"
            );
            assert!(stdout(&o).is_empty(), "{cmd:?}");
        }
    }
    let o = db(&["frobnicate"], &fixture("nested.db"));
    assert_eq!(o.status.code(), Some(2), "clap refuses a bad argument");
}

#[test]
fn one_bad_meta_is_shown_and_check_runs_on_the_other() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("db");
    std::fs::copy(fixture("nested.db"), &file).unwrap();
    let in_use = open_image(&file).in_use();
    patch(&file, in_use.0 * 4096 + 64, &[0xEE]); // the txid: the checksum no longer matches
    let o = db(&["info"], &file);
    let t = stdout(&o);
    assert_eq!(o.status.code(), Some(0), "{t}");
    assert!(
        t.contains(&format!("meta {in_use}      INVALID: checksum mismatch")),
        "{t}"
    );
    assert!(
        t.contains("checksum MISMATCH") && t.contains("in use      meta"),
        "{t}"
    );
    let o = db(&["check"], &file);
    let t = stdout(&o);
    assert_eq!(o.status.code(), Some(0), "{t}");
    assert!(t.contains(&format!("note: meta {in_use} is not valid")) && t.ends_with("OK\n"));
}

#[test]
fn a_flipped_leaf_byte_is_listed_by_check_and_dump_keeps_the_rest() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("db");
    sample(&file);
    let map = inspect::page_map(&open_image(&file)).unwrap();
    let leaf = map
        .runs
        .iter()
        .find(|r| r.kind == PageUse::Leaf && r.count > 1)
        .unwrap();
    patch(
        &file,
        leaf.start.0 * 512 + 16 + 8,
        &[0xFF, 0xFF, 0xFF, 0x7F],
    ); // element 0's ksize
    let o = db(&["check"], &file);
    let t = stdout(&o);
    assert_eq!(o.status.code(), Some(1), "{t}");
    assert!(
        t.contains(&format!(
            "page {}: element at offset 16 overruns",
            leaf.start
        )),
        "{t}"
    );
    let o = db(&["dump", "--json"], &file);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("damage: page"), "{}", stderr(&o));
    let d = json(&stdout(&o));
    assert!(
        d["buckets"].as_object().unwrap().contains_key("736d616c6c"),
        "the rest is there"
    );
    for cmd in [&["pages"][..], &["stats"]] {
        assert_eq!(db(cmd, &file).status.code(), Some(1), "{cmd:?}");
    }
}

#[test]
fn a_branch_pointing_at_a_free_page_is_listed_by_check() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("db");
    sample(&file);
    let image = open_image(&file);
    let map = inspect::page_map(&image).unwrap();
    let branch = map.runs.iter().find(|r| r.kind == PageUse::Branch).unwrap();
    let listed = |r: &&PageRun| matches!(r.kind, PageUse::Free | PageUse::Pending);
    let free = map.runs.iter().find(listed).expect("pages on the freelist");
    let PageBody::Branch(items) = inspect::page_detail(&image, branch.start).unwrap().body else {
        panic!("a branch page");
    };
    assert!(items.len() > 1);
    patch(
        &file,
        branch.start.0 * 512 + 16 + 8,
        &free.start.0.to_le_bytes(),
    ); // child 0
    let o = db(&["check"], &file);
    let t = stdout(&o);
    assert_eq!(o.status.code(), Some(1), "{t}");
    assert!(
        t.contains(&format!("page {}: reachable page is free", free.start)),
        "{t}"
    );
    assert!(t.contains("unreachable and not free"), "the old child: {t}");
}

#[test]
fn a_saved_simulator_disk_image_opens_like_any_file() {
    let dir = tempfile::tempdir().unwrap();
    let image = dir.path().join("seed-14.img");
    let case = root().join("corpus/seeds/seed-14.case");
    let o = Command::new(env!("CARGO_BIN_EXE_crashlab"))
        .args(["repro", case.to_str().unwrap(), "--save-image"])
        .arg(&image)
        .output()
        .unwrap();
    let t = stdout(&o);
    assert_eq!(o.status.code(), Some(0), "{t}{}", stderr(&o));
    assert!(t.contains("saved the durable disk image"), "{t}");
    let o = db(&["check"], &image);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    let o = db(&["info"], &image);
    assert!(stdout(&o).contains("in use      meta"), "{}", stdout(&o));
    assert_eq!(db(&["dump", "--json"], &image).status.code(), Some(0));
    assert!(open_image(&image).file_pages() >= 4);
}
