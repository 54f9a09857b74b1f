//! The inspection views of `crashlab_format::inspect` on files this engine writes: a dump, the
//! page map, statistics, damaged metas and freelist pages, and the engine's check of an image.

use crashlab_engine::{Db, MemStorage, Options};
use crashlab_format::inspect::*;
use crashlab_format::{Error, PageId, Problem, Result};

fn check(image: &Image) -> crashlab_engine::Result<Vec<crashlab_engine::Problem>> {
    Db::check_image(image)
}

const PS: u32 = 512;

/// Nested, inline, overflow and deleted data in 512-byte pages; `extra` more one-key commits.
fn sample(extra: u32) -> Vec<u8> {
    let mem = MemStorage::new();
    let options = Options {
        page_size: PS,
        ..Options::default()
    };
    let db = Db::open(mem.clone(), options).unwrap();
    db.update(|tx| {
        let mut a = tx.create_bucket(b"a")?;
        for i in 0..80u32 {
            a.put(format!("k{i:03}").as_bytes(), &[i as u8; 20])?;
        }
        a.put(b"big", &[7; 2000])?;
        a.create_bucket(b"sub")?.put(b"x", b"y")?;
        tx.create_bucket(b"inline")?.put(b"s", b"t")?;
        tx.create_bucket(b"empty")?;
        Ok(())
    })
    .unwrap();
    for c in 0..extra {
        db.update(|tx| {
            tx.bucket_mut(b"a")?
                .unwrap()
                .delete(format!("k{c:03}").as_bytes())
        })
        .unwrap();
    }
    drop(db);
    mem.snapshot()
}

fn image(bytes: Vec<u8>) -> Result<Image> {
    Image::open(MemStorage::from_bytes(bytes))
}

#[test]
fn dump_lists_every_bucket_and_key() {
    let (d, problems) = dump(&image(sample(0)).unwrap()).unwrap();
    assert!(problems.is_empty(), "{problems:?}");
    assert_eq!(d.page_size, PS);
    let paths: Vec<&str> = d.buckets.keys().map(String::as_str).collect();
    // a, a/sub, empty, inline
    assert_eq!(paths, ["61", "61/737562", "656d707479", "696e6c696e65"]);
    assert_eq!(d.buckets["61"].len(), 81);
    assert_eq!(d.buckets["61"][&hex(b"big")], hex(&[7; 2000]));
    assert_eq!(d.buckets["61/737562"][&hex(b"x")], hex(b"y"));
    assert!(d.buckets["656d707479"].is_empty());
}

#[test]
fn page_map_covers_every_page_below_the_high_water_mark_once() {
    let img = image(sample(30)).unwrap();
    let map = page_map(&img).unwrap();
    assert!(map.problems.is_empty(), "{:?}", map.problems);
    let mut next = 0;
    for run in &map.runs {
        assert_eq!(run.start.0, next, "{run:?}");
        next += run.pages;
    }
    assert_eq!(next, img.meta().high_water.0);
    let has = |k: PageUse| map.runs.iter().any(|r| r.kind == k);
    assert!(has(PageUse::Branch) && has(PageUse::Leaf) && has(PageUse::Freelist));
    assert!(has(PageUse::Free) || has(PageUse::Pending));
    assert!(!has(PageUse::Unreachable));
    let big = map
        .runs
        .iter()
        .find(|r| r.overflow > 0)
        .expect("the 2000-byte value overflows");
    assert_eq!(map.buckets.path(big.bucket.unwrap()), [b"a".as_slice()]);
}

#[test]
fn stats_add_up_and_see_the_inline_bucket() {
    let img = image(sample(30)).unwrap();
    let s = stats(&img).unwrap();
    assert!(s.problems.is_empty(), "{:?}", s.problems);
    let total = s.meta_pages
        + s.freelist_pages
        + s.free_pages
        + s.pending_pages
        + s.unreachable_pages
        + s.damaged_pages
        + s.branch.pages
        + s.leaf.pages;
    assert_eq!(total, s.high_water.0);
    assert_eq!(s.inline_buckets(), 3, "inline, empty and a/sub");
    let a = s.buckets.iter().find(|b| b.name == b"a").unwrap();
    assert_eq!(a.depth, 2, "a leaf level under one branch");
    assert!(s.leaf.fill_percent(PS) > 10.0 && s.leaf.fill_percent(PS) <= 100.0);
    assert!(
        s.pending_pages > 0,
        "the last commit freed the pages it rewrote"
    );
    assert!(check(&img).unwrap().is_empty());
}

#[test]
fn one_bad_meta_is_shown_and_the_other_used() {
    let mut bytes = sample(1);
    let img = image(bytes.clone()).unwrap();
    let newest = img.in_use();
    bytes[newest.0 as usize * PS as usize + 70] ^= 0xff; // inside the checksummed txid
    let img = image(bytes).unwrap();
    assert_ne!(img.in_use(), newest);
    let bad = &img.slots()[newest.0 as usize];
    assert!(!bad.is_valid() && bad.stored.is_some());
    assert!(matches!(bad.problem, Some(Error::ChecksumMismatch { .. })));
    assert!(img.previous_meta().is_none(), "the older meta is in use");
    assert!(check(&img).unwrap().is_empty());
}

#[test]
fn unreadable_files_fail_to_open_with_the_reason() {
    let bytes = sample(0);
    assert!(matches!(
        image(Vec::new()),
        Err(Error::Truncated { len: 0, .. })
    ));
    assert!(matches!(
        image(vec![0xAB; 4096]),
        Err(Error::NoValidMeta { .. })
    ));
    let needed = image(bytes.clone()).unwrap().meta().high_water.0 as usize * PS as usize;
    let short = bytes[..needed - 1].to_vec();
    assert!(matches!(image(short), Err(Error::Truncated { .. })));
}

#[test]
fn a_damaged_freelist_page_is_a_problem_not_a_failure() {
    let mut bytes = sample(0);
    let img = image(bytes.clone()).unwrap();
    let fl = img.meta().freelist.0 as usize * PS as usize;
    bytes[fl + 10] = 0xFF; // count: more ids than the page holds
    bytes[fl + 11] = 0x7F;
    let img = image(bytes).unwrap();
    let problems = check(&img).unwrap();
    assert!(
        problems.iter().any(|p| p.page == Some(img.meta().freelist)),
        "{problems:?}"
    );
    assert_eq!(stats(&img).unwrap().problems.len(), 1);
}

#[test]
fn page_detail_decodes_each_kind() {
    let img = image(sample(0)).unwrap();
    let map = page_map(&img).unwrap();
    for run in &map.runs {
        let d = page_detail(&img, run.start).unwrap();
        let ok = match (run.kind, &d.body) {
            (PageUse::Meta, PageBody::Meta { problem, .. }) => problem.is_none(),
            (PageUse::Branch, PageBody::Branch(items)) => items.len() as u64 == run.count,
            (PageUse::Leaf, PageBody::Leaf(items)) => items.len() as u64 == run.count,
            (PageUse::Freelist, PageBody::Freelist(_)) => true,
            (PageUse::Free | PageUse::Pending, _) => true,
            _ => false,
        };
        assert!(ok, "{run:?}: {d:?}");
    }
    assert!(page_detail(&img, PageId(img.file_pages())).is_err());
}

/// A misplaced write: a copy of leaf L lands on an overflow page of the leaf holding the large
/// value, and the branch above L now points at the copy (what an engine that reused a page still
/// in a node's run would leave). The walk meets the covered page first inside the large value's
/// run; referenced then as a node, it is still entered, so its keys are dumped (the engine reads
/// them) and the page is named as reached twice. The walk once entered such a page never, as
/// `check` once did (corpus/fuzz/027).
#[test]
fn a_page_met_first_inside_another_nodes_run_is_still_entered() {
    let mut bytes = sample(0);
    let map = page_map(&image(bytes.clone()).unwrap()).unwrap();
    let big = map.runs.iter().find(|r| r.overflow > 0).unwrap();
    let covered = big.start.0 + 1;
    let branch = map
        .runs
        .iter()
        .find(|r| r.kind == PageUse::Branch && r.bucket == big.bucket)
        .unwrap();
    let ps = PS as usize;
    let at = |page: u64| page as usize * ps;
    // The last child of the branch: its keys come after "big" in key order.
    let slot = at(branch.start.0) + 16 + (branch.count as usize - 1) * 16 + 8;
    let leaf = u64::from_le_bytes(bytes[slot..slot + 8].try_into().unwrap());
    let copy = bytes[at(leaf)..at(leaf) + ps].to_vec();
    bytes[at(covered)..at(covered) + ps].copy_from_slice(&copy);
    bytes[at(covered)..at(covered) + 8].copy_from_slice(&covered.to_le_bytes());
    bytes[slot..slot + 8].copy_from_slice(&covered.to_le_bytes());

    let img = image(bytes).unwrap();
    let (d, problems) = dump(&img).unwrap();
    let keys = &d.buckets["61"];
    let last_keys = page_detail(&img, PageId(covered)).unwrap();
    let PageBody::Leaf(items) = last_keys.body else {
        panic!("page {covered} reads as a leaf: {last_keys:?}");
    };
    assert!(items.iter().any(|it| !it.is_bucket()), "{items:?}");
    for it in items.iter().filter(|it| !it.is_bucket()) {
        assert!(keys.contains_key(&hex(it.key())), "{it:?}: {problems:?}");
    }
    assert_eq!(keys.len(), 81, "{problems:?}");
    assert_eq!(
        d.buckets["61/737562"][&hex(b"x")],
        hex(b"y"),
        "a/sub is below it"
    );
    let twice = |p: &&Problem| p.page == Some(PageId(covered)) && p.message == "page reached twice";
    assert!(problems.iter().any(|p| twice(&p)), "{problems:?}");
    let engine = check(&img).unwrap();
    assert!(
        engine.iter().any(|p| p.page == Some(PageId(covered))),
        "{engine:?}"
    );
}
