//! Focused behaviour: cursor edges, inline buckets turning paged and back, limits, the commit's
//! I/O order, and latching after a failed commit.

use crashlab_engine::{Db, Error, FormatError, MemStorage, Options, Storage};
use std::io;
use std::sync::{Arc, Mutex};

fn small_pages() -> Options {
    Options {
        page_size: 512,
        ..Options::default()
    }
}

fn key(i: u32) -> Vec<u8> {
    format!("{i:05}").into_bytes()
}

#[test]
fn cursor_walks_a_multi_level_tree_both_ways_and_seeks() {
    let db = Db::open(MemStorage::new(), small_pages()).unwrap();
    db.update(|tx| {
        let mut b = tx.create_bucket(b"b")?;
        for i in (0..2000).step_by(2) {
            b.put(&key(i), &[1; 20])?;
        }
        Ok(())
    })
    .unwrap();
    db.view(|tx| {
        let b = tx.bucket(b"b")?.unwrap();
        let mut c = b.cursor();
        assert_eq!(c.first()?.unwrap().key(), key(0));
        assert_eq!(c.prev()?, None, "nothing before the first key");
        assert_eq!(c.last()?.unwrap().key(), key(1998));
        assert_eq!(c.next()?, None, "nothing after the last key");
        // Backward over the whole bucket visits every key once, in order.
        let mut n = 1;
        let mut prev = key(1998);
        c.last()?;
        while let Some(e) = c.prev()? {
            let k = e.key().to_vec();
            assert!(k < prev);
            prev = k;
            n += 1;
        }
        assert_eq!(n, 1000);
        // Seek to an absent key lands on the next one; past the end gives nothing.
        assert_eq!(c.seek(&key(1001))?.unwrap().key(), key(1002));
        assert_eq!(c.seek(&key(1002))?.unwrap().key(), key(1002));
        assert_eq!(c.seek(b"")?.unwrap().key(), key(0));
        assert_eq!(c.seek(b"99999")?, None);
        // After a seek, next and prev continue from there.
        c.seek(&key(501))?;
        assert_eq!(c.next()?.unwrap().key(), key(504));
        assert_eq!(c.prev()?.unwrap().key(), key(502));
        Ok(())
    })
    .unwrap();
}

#[test]
fn write_tx_cursor_sees_uncommitted_writes() {
    let db = Db::open(MemStorage::new(), small_pages()).unwrap();
    let mut tx = db.begin_write().unwrap();
    let mut b = tx.create_bucket(b"b").unwrap();
    for i in 0..300 {
        b.put(&key(i), b"v").unwrap();
    }
    b.delete(&key(0)).unwrap();
    let items = b.items().unwrap();
    assert_eq!(items.len(), 299);
    assert_eq!(items[0].0, key(1));
    tx.rollback();
    assert!(
        !db.view(|tx| Ok(tx.bucket(b"b")?.is_some())).unwrap(),
        "rollback left nothing"
    );
}

#[test]
fn bucket_goes_inline_to_paged_and_back() {
    let mem = MemStorage::new();
    let db = Db::open(mem.clone(), Options::default()).unwrap();
    db.update(|tx| tx.create_bucket(b"b")?.put(b"k", b"small"))
        .unwrap();
    let hw_inline = db.meta().high_water;
    // 200 × 100-byte values cannot be inline (over a quarter page).
    db.update(|tx| {
        let mut b = tx.bucket_mut(b"b")?.unwrap();
        for i in 0..200 {
            b.put(&key(i), &[7; 100])?;
        }
        Ok(())
    })
    .unwrap();
    assert!(
        db.meta().high_water > hw_inline,
        "the bucket now has pages of its own"
    );
    db.update(|tx| {
        let mut b = tx.bucket_mut(b"b")?.unwrap();
        for i in 0..200 {
            b.delete(&key(i))?;
        }
        Ok(())
    })
    .unwrap();
    assert_eq!(db.check().unwrap(), vec![]);
    // Back to one small key: inline again, so its pages became free.
    let (free, pending) = db.freelist_counts();
    assert!(free + pending > 0);
    drop(db);
    let db = Db::open(mem, Options::default()).unwrap();
    assert_eq!(
        db.view(|tx| Ok(tx.bucket(b"b")?.unwrap().get(b"k")?.map(|v| v.to_vec())))
            .unwrap(),
        Some(b"small".to_vec())
    );
    assert_eq!(db.check().unwrap(), vec![]);
}

#[test]
fn limits_and_misuse_are_typed_errors() {
    let db = Db::open(MemStorage::new(), Options::default()).unwrap();
    let mut tx = db.begin_write().unwrap();
    assert!(matches!(
        tx.create_bucket(b""),
        Err(Error::BucketNameRequired)
    ));
    let mut b = tx.create_bucket(b"b").unwrap();
    assert!(matches!(b.put(b"", b"v"), Err(Error::KeyRequired)));
    assert!(matches!(
        b.put(&vec![1; 32769], b"v"),
        Err(Error::KeyTooLarge { .. })
    ));
    b.put(&vec![1; 32768], b"max key is fine").unwrap();
    b.create_bucket(b"sub").unwrap();
    assert!(matches!(
        b.put(b"sub", b"v"),
        Err(Error::IncompatibleValue { .. })
    ));
    assert!(matches!(
        b.delete(b"sub"),
        Err(Error::IncompatibleValue { .. })
    ));
    assert!(matches!(b.create_bucket(b"sub"), Err(Error::BucketExists)));
    b.put(b"val", b"v").unwrap();
    assert!(matches!(
        b.create_bucket(b"val"),
        Err(Error::IncompatibleValue { .. })
    ));
    assert!(matches!(
        b.delete_bucket(b"val"),
        Err(Error::IncompatibleValue { .. })
    ));
    assert!(matches!(
        b.delete_bucket(b"nope"),
        Err(Error::BucketNotFound)
    ));
    assert!(matches!(
        tx.root_mut().put(b"k", b"v"),
        Err(Error::IncompatibleValue { .. })
    ));
    tx.commit().unwrap();
    let ro = Db::open(
        MemStorage::new(),
        Options {
            page_size: 1000,
            ..Options::default()
        },
    );
    assert!(matches!(ro, Err(Error::InvalidOptions(_))));
}

/// Records every storage call, and can fail the n-th sync.
#[derive(Clone, Default)]
struct Recorder {
    inner: MemStorage,
    log: Arc<Mutex<Vec<String>>>,
    fail_sync_at: Arc<Mutex<Option<usize>>>,
    /// Reads of this 4 KiB page fail.
    fail_reads_of: Arc<Mutex<Option<u64>>>,
}

impl Storage for Recorder {
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        if *self.fail_reads_of.lock().unwrap() == Some(offset / 4096) {
            return Err(io::Error::other("injected read failure"));
        }
        self.inner.read_at(offset, buf)
    }
    fn write_at(&self, offset: u64, buf: &[u8]) -> io::Result<()> {
        self.log
            .lock()
            .unwrap()
            .push(format!("write {}", offset / 4096));
        self.inner.write_at(offset, buf)
    }
    fn sync(&self) -> io::Result<()> {
        let mut log = self.log.lock().unwrap();
        let n = log.iter().filter(|l| *l == "sync").count();
        log.push("sync".into());
        if *self.fail_sync_at.lock().unwrap() == Some(n) {
            return Err(io::Error::other("injected sync failure"));
        }
        Ok(())
    }
    fn len(&self) -> io::Result<u64> {
        self.inner.len()
    }
    fn set_len(&self, len: u64) -> io::Result<()> {
        self.log.lock().unwrap().push(format!("set_len {len}"));
        self.inner.set_len(len)
    }
}

#[test]
fn commit_order_is_growth_then_pages_sync_meta_sync() {
    let rec = Recorder::default();
    let db = Db::open(rec.clone(), Options::default()).unwrap();
    rec.log.lock().unwrap().clear();
    db.update(|tx| tx.create_bucket(b"b")?.put(b"k", &[0; 100]))
        .unwrap();
    let log = rec.log.lock().unwrap().clone();
    // The fresh file is 4 pages; this commit needs page 4+, so growth comes first.
    assert_eq!(log[0], "set_len 32768", "{log:?}");
    assert_eq!(
        log[1], "sync",
        "growth is durable before pages past the old end are written"
    );
    let meta_write = log
        .iter()
        .position(|l| l == "write 0" || l == "write 1")
        .unwrap();
    assert_eq!(
        log[meta_write - 1],
        "sync",
        "data synced before the meta: {log:?}"
    );
    assert_eq!(
        log.last().unwrap(),
        "sync",
        "meta synced before the commit returns"
    );
    // [set_len, sync, data writes…, sync, meta write, sync]: every data write precedes the sync.
    assert_eq!(
        log.iter().filter(|l| l.starts_with("write")).count() - 1,
        meta_write - 3
    );
    assert_eq!(
        db.meta().txid.0 % 2,
        if log[meta_write] == "write 0" { 0 } else { 1 }
    );
}

/// A one-key write's pages are a leaf, the branches above it and the freelist page, allocated
/// in that order and placed in the arena in that order: where their pages follow each other on
/// disk they go out as one write straight from the arena. Before, every such run was copied
/// into a commit buffer first, one buffer per commit (300 of 300 here, for both kinds). Images
/// placed out of page order still go through a buffer, so the bound is loose, not zero. The
/// file must read back whole either way.
#[test]
fn one_key_writes_go_out_from_the_arena_without_a_commit_buffer() {
    use crashlab_engine::FreelistKind;
    for freelist in [FreelistKind::Array, FreelistKind::Hashmap] {
        let storage = MemStorage::new();
        let options = Options {
            freelist,
            ..Options::default()
        };
        let db = Db::open(storage.clone(), options.clone()).unwrap();
        db.update(|tx| {
            let mut b = tx.create_bucket(b"b")?;
            (0..2000).try_for_each(|i| b.put(&key(i), &[1; 100]))
        })
        .unwrap();
        let before = db.counters();
        for i in 0..300 {
            db.update(|tx| {
                tx.bucket_mut(b"b")?
                    .unwrap()
                    .put(&key(50_000 + i), &[2; 100])
            })
            .unwrap();
        }
        let c = db.counters();
        let (commits, buffers) = (
            c.commits - before.commits,
            c.buffer_allocations - before.buffer_allocations,
        );
        assert_eq!(commits, 300);
        assert!(
            buffers < commits / 10,
            "{freelist:?}: {buffers} commit buffers in {commits} commits"
        );
        assert!(
            c.write_calls_saved > before.write_calls_saved,
            "runs were still joined"
        );
        drop(db);
        let db = Db::open(MemStorage::from_bytes(storage.snapshot()), options).unwrap();
        assert!(db.check().unwrap().is_empty());
        db.view(|tx| {
            let b = tx.bucket(b"b")?.unwrap();
            assert_eq!(b.iter().count(), 2300);
            assert_eq!(b.get(&key(50_299))?.as_deref(), Some(&[2u8; 100][..]));
            Ok(())
        })
        .unwrap();
    }
}

#[test]
fn failed_sync_fails_the_commit_and_latches_until_reopen() {
    let rec = Recorder::default();
    let db = Db::open(rec.clone(), Options::default()).unwrap();
    let before = db.meta();
    let syncs = rec
        .log
        .lock()
        .unwrap()
        .iter()
        .filter(|l| *l == "sync")
        .count();
    *rec.fail_sync_at.lock().unwrap() = Some(syncs + 1); // the sync after the data pages
    let err = db
        .update(|tx| tx.create_bucket(b"b")?.put(b"k", b"v"))
        .unwrap_err();
    assert!(
        matches!(err, Error::Format(FormatError::Io { op: "sync", .. })),
        "{err}"
    );
    assert_eq!(db.meta(), before, "a failed commit is not published");
    assert!(matches!(db.begin_write(), Err(Error::Latched(_))));
    // Readers still work on the last good snapshot.
    assert!(!db.view(|tx| Ok(tx.bucket(b"b")?.is_some())).unwrap());
    drop(db);
    *rec.fail_sync_at.lock().unwrap() = None;
    let db = Db::open(rec, Options::default()).unwrap();
    db.update(|tx| tx.create_bucket(b"b")?.put(b"k", b"v"))
        .unwrap();
    assert_eq!(db.check().unwrap(), vec![]);
}

#[test]
fn no_freelist_sync_rebuilds_and_switches_both_ways() {
    let mem = MemStorage::new();
    let nofl = Options {
        no_freelist_sync: true,
        ..Options::default()
    };
    let db = Db::open(mem.clone(), nofl.clone()).unwrap();
    db.update(|tx| {
        let mut b = tx.create_bucket(b"b")?;
        for i in 0..500 {
            b.put(&key(i), &[3; 200])?;
        }
        Ok(())
    })
    .unwrap();
    db.update(|tx| {
        let mut b = tx.bucket_mut(b"b")?.unwrap();
        for i in 0..400 {
            b.delete(&key(i))?;
        }
        Ok(())
    })
    .unwrap();
    assert!(!db.meta().has_freelist(), "sentinel recorded");
    let free_before = db.freelist_counts();
    drop(db);
    let db = Db::open(mem.clone(), nofl).unwrap();
    assert!(
        db.counters().rebuild_pages_visited > 0,
        "open walked the tree"
    );
    let (free, pending) = db.freelist_counts();
    assert_eq!(
        free,
        free_before.0 + free_before.1,
        "rebuild finds every free page"
    );
    assert_eq!(pending, 0);
    assert_eq!(db.check().unwrap(), vec![]);
    drop(db);
    // Opening without the option persists a freelist at once.
    let db = Db::open(mem, Options::default()).unwrap();
    assert!(db.meta().has_freelist());
    assert_eq!(db.check().unwrap(), vec![]);
}

#[test]
fn failed_commit_with_no_freelist_sync_rebuilds_on_reopen() {
    let rec = Recorder::default();
    let opts = Options {
        no_freelist_sync: true,
        ..Options::default()
    };
    let db = Db::open(rec.clone(), opts.clone()).unwrap();
    db.update(|tx| {
        let mut b = tx.create_bucket(b"b")?;
        for i in 0..300 {
            b.put(&key(i), &[5; 150])?;
        }
        Ok(())
    })
    .unwrap();
    let syncs = rec
        .log
        .lock()
        .unwrap()
        .iter()
        .filter(|l| *l == "sync")
        .count();
    // Fail the final (meta) sync of a commit that frees and reallocates many pages.
    *rec.fail_sync_at.lock().unwrap() = Some(syncs + 1);
    let err = db
        .update(|tx| {
            let mut b = tx.bucket_mut(b"b")?.unwrap();
            for i in 0..250 {
                b.delete(&key(i))?;
            }
            b.put(b"new", &[9; 3000])?;
            Ok(())
        })
        .unwrap_err();
    assert!(
        matches!(err, Error::Format(FormatError::Io { .. })),
        "{err}"
    );
    drop(db);
    *rec.fail_sync_at.lock().unwrap() = None;
    // The meta write reached the page cache but its sync failed: either state is allowed.
    let db = Db::open(rec, opts).unwrap();
    assert_eq!(
        db.check().unwrap(),
        vec![],
        "rebuilt free set is consistent"
    );
    let n = db
        .view(|tx| {
            Ok(tx
                .bucket(b"b")?
                .unwrap()
                .cursor()
                .first()?
                .map(|e| e.key().to_vec()))
        })
        .unwrap();
    assert!(
        n == Some(key(0)) || n == Some(key(250)),
        "old or new state, got {n:?}"
    );
    db.update(|tx| tx.bucket_mut(b"b")?.unwrap().put(b"after", b"ok"))
        .unwrap();
    assert_eq!(db.check().unwrap(), vec![]);
}

/// The deepest chain of buckets the writer allows, its bottom inline (one small value) or paged
/// (many values), survives a reopen with the freelist synced or rebuilt, and checks clean; one
/// level more is refused. (The rebuild and `check()` once counted one level more than the
/// writer: corpus/regressions/nesting-limit-off-by-one.case.)
#[test]
fn the_deepest_buckets_the_writer_allows_reopen_and_check_clean() {
    use crashlab_engine::limits::MAX_BUCKET_DEPTH;
    let names: Vec<Vec<u8>> = (1..=MAX_BUCKET_DEPTH)
        .map(|d| format!("n{d}").into_bytes())
        .collect();
    for no_freelist_sync in [false, true] {
        for values in [1u32, 200] {
            let opts = Options {
                no_freelist_sync,
                ..small_pages()
            };
            let mem = MemStorage::new();
            let db = Db::open(mem.clone(), opts.clone()).unwrap();
            let refs: Vec<&[u8]> = names.iter().map(Vec::as_slice).collect();
            db.update(|tx| {
                tx.create_bucket(refs[0])?;
                for d in 1..refs.len() {
                    let mut parent = tx.bucket_path_mut(&refs[..d])?.expect("created");
                    parent.create_bucket(refs[d])?;
                }
                let mut b = tx.bucket_path_mut(&refs)?.expect("created");
                for i in 0..values {
                    b.put(&key(i), &[7; 40])?;
                }
                Ok(())
            })
            .unwrap();
            let refused = db.update(|tx| {
                let mut deepest = tx.bucket_path_mut(&refs)?.expect("the chain exists");
                deepest.create_bucket(b"past").map(drop)
            });
            assert!(
                matches!(refused, Err(Error::BucketTooDeep { max }) if max == MAX_BUCKET_DEPTH),
                "{refused:?}"
            );
            assert_eq!(
                db.check().unwrap(),
                vec![],
                "live, synced={no_freelist_sync}"
            );
            drop(db);
            let db = Db::open(mem, opts).unwrap();
            assert_eq!(db.check().unwrap(), vec![], "reopened");
            let got = db
                .view(|tx| {
                    let chain = tx.bucket_path(&refs)?.expect("chain");
                    Ok(chain.get(&key(0))?.map(|v| v.to_vec()))
                })
                .unwrap();
            assert_eq!(got.as_deref(), Some(&[7u8; 40][..]));
        }
    }
}

/// A page the storage cannot read leaves `check()` incomplete: it fails with the I/O error
/// instead of calling the page damaged, and checks clean once the page reads again.
#[test]
fn check_fails_with_the_io_error_of_a_page_it_cannot_read() {
    let rec = Recorder::default();
    let opts = Options {
        page_cache_pages: 0,
        ..Options::default()
    };
    let db = Db::open(rec.clone(), opts).unwrap();
    db.update(|tx| {
        let mut b = tx.create_bucket(b"b")?;
        (0..300).try_for_each(|i| b.put(&key(i), &[5; 100]))
    })
    .unwrap();
    let root = db.meta().root.0;
    *rec.fail_reads_of.lock().unwrap() = Some(root);
    let err = db.check().unwrap_err();
    assert!(
        matches!(err, Error::Format(FormatError::Io { .. })),
        "{err}"
    );
    *rec.fail_reads_of.lock().unwrap() = None;
    assert_eq!(db.check().unwrap(), vec![]);
}

/// A bucket's name is a key of its parent and obeys the same limit, at the top level and below,
/// through `create_bucket` and `create_bucket_if_missing` (found missing by a planted bug that
/// dropped the check: nothing else asks for a longer name).
#[test]
fn bucket_names_obey_the_key_size_limit() {
    let mem = MemStorage::new();
    let db = Db::open(mem.clone(), Options::default()).unwrap();
    let (longest, over) = (vec![b'n'; 32768], vec![b'n'; 32769]);
    fn too_large<T>(r: Result<T, Error>) -> bool {
        matches!(r, Err(Error::KeyTooLarge { .. }))
    }
    let mut tx = db.begin_write().unwrap();
    assert!(too_large(tx.create_bucket(&over)));
    assert!(too_large(tx.create_bucket_if_missing(&over)));
    let mut top = tx.create_bucket(&longest).unwrap();
    assert!(too_large(top.create_bucket(&over)));
    assert!(too_large(top.create_bucket_if_missing(&over)));
    top.create_bucket(&longest)
        .unwrap()
        .put(b"k", b"v")
        .unwrap();
    tx.commit().unwrap();
    drop(db);
    let db = Db::open(mem, Options::default()).unwrap();
    let got = db.view(|tx| {
        let top = tx.bucket(&longest)?.expect("the longest name is kept");
        let sub = top.bucket(&longest)?.expect("below too");
        Ok(sub.get(b"k")?.map(|v| v.to_vec()))
    });
    assert_eq!(got.unwrap(), Some(b"v".to_vec()));
    assert_eq!(db.check().unwrap(), vec![]);
}

/// The root bucket's sequence lives in the meta page: set and bumped through `root_mut`, in
/// transactions that change nothing else and in ones that do, it survives each commit and a
/// reopen, and a rolled-back change leaves it as it was.
#[test]
fn the_root_buckets_sequence_is_kept_in_the_meta() {
    for freelist_sync in [true, false] {
        let mem = MemStorage::new();
        let opts = Options {
            no_freelist_sync: !freelist_sync,
            ..Options::default()
        };
        let db = Db::open(mem.clone(), opts.clone()).unwrap();
        let root_seq = |db: &Db| db.view(|tx| Ok(tx.root()?.sequence())).unwrap();
        db.update(|tx| {
            tx.root_mut().set_sequence(41);
            Ok(())
        })
        .unwrap();
        assert_eq!(root_seq(&db), 41);
        db.update(|tx| {
            assert_eq!(tx.root_mut().next_sequence(), 42);
            tx.create_bucket(b"b")?.put(b"k", b"v")
        })
        .unwrap();
        let mut tx = db.begin_write().unwrap();
        tx.root_mut().set_sequence(7);
        tx.rollback();
        assert_eq!(root_seq(&db), 42, "a rolled-back change is not kept");
        db.update(|tx| {
            assert_eq!(tx.root_mut().next_sequence(), 43);
            Ok(())
        })
        .unwrap();
        drop(db);
        let db = Db::open(mem, opts).unwrap();
        assert_eq!(root_seq(&db), 43, "freelist synced: {freelist_sync}");
        assert_eq!(db.meta().sequence, 43);
        assert_eq!(db.check().unwrap(), vec![]);
    }
}
