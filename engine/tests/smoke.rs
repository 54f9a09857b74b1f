use crashlab_engine::{Db, MemStorage, Options};

#[test]
fn many_keys_nested_buckets_reopen() {
    let mem = MemStorage::new();
    let db = Db::open(mem.clone(), Options::default()).unwrap();
    db.update(|tx| {
        let mut b = tx.create_bucket(b"a")?;
        for i in 0..5000u32 {
            b.put(
                format!("key{i:06}").as_bytes(),
                &vec![i as u8; (i % 300) as usize],
            )?;
        }
        let mut c = b.create_bucket(b"nested")?;
        c.put(b"x", b"y")?;
        Ok(())
    })
    .unwrap();
    assert_eq!(db.check().unwrap(), vec![]);
    db.update(|tx| {
        let mut b = tx.bucket_mut(b"a")?.unwrap();
        for i in (0..5000u32).step_by(2) {
            assert!(b.delete(format!("key{i:06}").as_bytes())?);
        }
        Ok(())
    })
    .unwrap();
    let problems = db.check().unwrap();
    assert!(problems.is_empty(), "{problems:?}");
    drop(db);
    let db = Db::open(mem, Options::default()).unwrap();
    assert!(db.check().unwrap().is_empty());
    db.view(|tx| {
        let b = tx.bucket(b"a")?.unwrap();
        for i in 0..5000u32 {
            let v = b.get(format!("key{i:06}").as_bytes())?;
            if i % 2 == 0 {
                assert_eq!(v.as_deref(), None);
            } else {
                assert_eq!(v.as_deref(), Some(&vec![i as u8; (i % 300) as usize][..]));
            }
        }
        let c = b.bucket(b"nested")?.unwrap();
        assert_eq!(c.get(b"x")?.as_deref(), Some(&b"y"[..]));
        let mut cur = b.cursor();
        let mut n = 0;
        let mut it = cur.first()?;
        while it.is_some() {
            n += 1;
            it = cur.next()?;
        }
        assert_eq!(n, 2501);
        Ok(())
    })
    .unwrap();
    // delete everything: tree shrinks back
    db.update(|tx| {
        let mut b = tx.bucket_mut(b"a")?.unwrap();
        for i in (1..5000u32).step_by(2) {
            assert!(b.delete(format!("key{i:06}").as_bytes())?);
        }
        b.delete_bucket(b"nested")?;
        Ok(())
    })
    .unwrap();
    let problems = db.check().unwrap();
    assert!(problems.is_empty(), "{problems:?}");
    db.view(|tx| {
        let b = tx.bucket(b"a")?.unwrap();
        assert!(b.cursor().first()?.is_none());
        Ok(())
    })
    .unwrap();
}

/// One key per commit at both edges of a three-level tree, as the benchmarks write: each commit
/// rewrites the same path, so its branches are patched over their last images (the debug
/// assertion in `spill::write_piece` compares each patch with a fresh encoding). The file
/// checks clean and reads back what a model holds, before and after a reopen.
#[test]
fn one_key_commits_on_a_deep_tree_read_back() {
    let mem = MemStorage::new();
    let opts = Options {
        page_size: 512,
        ..Options::default()
    };
    let db = Db::open(mem.clone(), opts.clone()).unwrap();
    let key = |i: u32| format!("k{i:07}").into_bytes();
    let mut model = std::collections::BTreeMap::new();
    db.update(|tx| {
        let mut b = tx.create_bucket(b"b")?;
        for i in 0..3000 {
            b.put(&key(i), &[i as u8; 40])?;
            model.insert(key(i), vec![i as u8; 40]);
        }
        Ok(())
    })
    .unwrap();
    for i in 0..600 {
        let (put, del) = (key(3000 + i), key(i));
        db.update(|tx| {
            let mut b = tx.bucket_mut(b"b")?.unwrap();
            match i % 3 {
                0 => b.put(&put, b"v").map(drop),
                _ => b.delete(&del).map(drop),
            }
        })
        .unwrap();
        match i % 3 {
            0 => model.insert(put, b"v".to_vec()),
            _ => model.remove(&del),
        };
    }
    for db in [db, Db::open(mem, opts).unwrap()] {
        assert!(db.check().unwrap().is_empty());
        db.view(|tx| {
            let b = tx.bucket(b"b")?.unwrap();
            let got: Vec<(Vec<u8>, Vec<u8>)> = b
                .iter()
                .map(|e| e.map(|e| (e.key().to_vec(), e.value().unwrap().to_vec())))
                .collect::<Result<_, _>>()?;
            assert!(got.iter().map(|(k, v)| (k, v)).eq(model.iter()));
            Ok(())
        })
        .unwrap();
    }
}
