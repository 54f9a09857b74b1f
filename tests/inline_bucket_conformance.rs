//! bbolt stores a bucket inline (its root leaf inside its parent's value) only when the bucket
//! is small and holds no sub-bucket, and its rebuild of the free pages on open
//! (`NoFreelistSync`) does not look inside inline buckets. A file whose inline bucket holds a
//! sub-bucket with pages of its own therefore reads fine in this engine, which looks inside,
//! but under bbolt those pages count as free and are handed out again. `Db::check` reports such
//! a bucket; its negative control is `DebugHooks::inline_keeps_sub_buckets`, which inlines a
//! small bucket whatever it holds. Real bbolt's view of the same file is in
//! `bbolt_interop.rs`.

use crashlab_engine::{CursorItem, Db, MemStorage, Options, Problem};

pub fn options(inline_keeps_sub_buckets: bool) -> Options {
    let mut options = Options::default();
    options.debug.inline_keeps_sub_buckets = inline_keeps_sub_buckets;
    options
}

/// Bucket `a` holds only sub-bucket `b`, whose 40 values of 100 bytes need pages of their own:
/// `a` is small enough to be inline, and bbolt's rule keeps it on a page because of `b`.
pub fn write_nested(db: &Db) {
    db.update(|tx| {
        let mut a = tx.create_bucket(b"a")?;
        let mut b = a.create_bucket(b"b")?;
        for i in 0..40u32 {
            b.put(format!("key{i:02}").as_bytes(), &[i as u8; 100])?;
        }
        Ok(())
    })
    .unwrap();
}

/// Every item of `a/b`.
fn contents(db: &Db) -> Vec<CursorItem> {
    db.view(|tx| {
        let b = tx.bucket_path(&[b"a", b"b"])?.expect("bucket a/b");
        b.iter().map(|entry| entry.map(|e| e.to_item())).collect()
    })
    .unwrap()
}

fn nested_file(inline_keeps_sub_buckets: bool) -> (MemStorage, Vec<Problem>) {
    let mem = MemStorage::new();
    let db = Db::open(mem.clone(), options(inline_keeps_sub_buckets)).unwrap();
    write_nested(&db);
    assert_eq!(contents(&db).len(), 40);
    let problems = db.check().unwrap();
    (mem, problems)
}

#[test]
fn an_inline_bucket_holding_a_sub_bucket_is_reported_and_its_clean_twin_is_not() {
    let (_, clean) = nested_file(false);
    assert_eq!(clean, vec![], "bbolt's rule keeps `a` on a page");
    let (mem, problems) = nested_file(true);
    let messages: Vec<String> = problems.iter().map(|p| p.to_string()).collect();
    assert_eq!(messages.len(), 1, "{messages:?}");
    assert!(
        messages[0].contains("inline bucket \"a\" holds a sub-bucket"),
        "{messages:?}"
    );
    // The engine itself still reads every key: only the check tells the file apart.
    let reopened = Db::open(mem, Options::default()).unwrap();
    let clean_db = Db::open(nested_file(false).0, Options::default()).unwrap();
    assert_eq!(contents(&reopened), contents(&clean_db));
}

#[test]
fn a_commit_that_rewrites_the_inline_bucket_puts_it_back_on_a_page() {
    let (mem, problems) = nested_file(true);
    assert_eq!(problems.len(), 1);
    let db = Db::open(mem, Options::default()).unwrap();
    db.update(|tx| tx.bucket_mut(b"a")?.unwrap().put(b"x", b"y"))
        .unwrap();
    assert_eq!(db.check().unwrap(), vec![]);
    assert_eq!(contents(&db).len(), 40);
}

/// A file whose bucket `s` holds one value: `len` bytes, under control (x) when `half` (a
/// bucket stays inline while it fits in half a page; bbolt's rule is a quarter).
fn sized_file(len: usize, half: bool) -> Vec<Problem> {
    let mut options = Options::default();
    options.debug.inline_up_to_half_page = half;
    let db = Db::open(MemStorage::new(), options).unwrap();
    db.update(|tx| tx.create_bucket(b"s")?.put(b"k", &vec![7; len]))
        .unwrap();
    db.check().unwrap()
}

/// The size half of bbolt's rule, at its edge: a leaf of one element is its 16-byte page
/// header, a 16-byte element and the key and value, so on 4 KiB pages a value of 1,007 bytes
/// under key `k` makes 1,040 bytes, past the quarter page (1,024), and 991 bytes make 1,024.
#[test]
fn an_inline_bucket_past_a_quarter_page_is_reported_and_one_at_it_is_not() {
    assert_eq!(
        sized_file(991, true),
        vec![],
        "1,024 bytes fit a quarter page"
    );
    assert_eq!(
        sized_file(1_007, false),
        vec![],
        "bbolt's rule puts it on a page"
    );
    let messages: Vec<String> = sized_file(1_007, true)
        .iter()
        .map(|p| p.to_string())
        .collect();
    assert_eq!(messages.len(), 1, "{messages:?}");
    assert!(
        messages[0].contains("inline bucket \"s\" takes 1040 bytes, more than a quarter page"),
        "{messages:?}"
    );
}
