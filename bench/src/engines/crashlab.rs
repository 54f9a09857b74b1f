//! crashlab's engine on a real file (`FileStorage`: pread/pwrite, fdatasync).

use crate::concurrent::Concurrent;
use crate::kv::{Kv, Mode, Read};
use crate::shape::{key, scattered, BUCKET};
use crashlab_engine::{Db, FreelistKind, Options};
use std::hint::black_box;
use std::ops::Range;
use std::path::Path;

pub struct Crashlab {
    db: Db,
}

impl Crashlab {
    pub fn open(dir: &Path, freelist: FreelistKind, no_freelist_sync: bool, mode: Mode) -> Self {
        let options = Options {
            freelist,
            no_freelist_sync,
            no_sync: mode == Mode::NoSync,
            ..Options::default()
        };
        Crashlab::open_with(dir, options)
    }

    /// Open durably with `max_batch_delay` (0: a group commit takes whoever queued while the
    /// previous one ran, instead of waiting up to the default 10 ms for more).
    pub fn open_with_batch_delay(
        dir: &Path,
        freelist: FreelistKind,
        no_freelist_sync: bool,
        max_batch_delay: std::time::Duration,
    ) -> Self {
        let options = Options {
            freelist,
            no_freelist_sync,
            max_batch_delay,
            ..Options::default()
        };
        Crashlab::open_with(dir, options)
    }

    fn open_with(dir: &Path, options: Options) -> Self {
        let db = Db::open_path(dir.join("bench.db"), options).expect("crashlab: open");
        // Only a new database commits at open, so that reopening measures the open alone.
        let exists = db.view(|tx| Ok(tx.bucket(BUCKET.as_bytes())?.is_some()));
        if !exists.expect("crashlab: look up bucket") {
            db.update(|tx| tx.create_bucket(BUCKET.as_bytes()).map(drop))
                .expect("crashlab: create bucket");
        }
        Crashlab { db }
    }
}

impl Kv for Crashlab {
    fn put(&mut self, keys: Range<u64>, value: &[u8]) {
        self.db
            .update(|tx| {
                let mut b = tx.bucket_mut(BUCKET.as_bytes())?.expect("bucket exists");
                keys.clone().try_for_each(|n| b.put(&key(n), value))
            })
            .unwrap_or_else(|e| panic!("crashlab: put {keys:?}: {e}"));
    }

    fn get(&mut self, reads: Range<u64>, read: Read) {
        self.db
            .view(|tx| {
                let b = tx.bucket(BUCKET.as_bytes())?.expect("bucket exists");
                for i in reads.clone() {
                    let v = b.get(&key(scattered(i)))?;
                    let Some(v) = v else {
                        panic!("crashlab: read {i} found no value");
                    };
                    read.consume(&v);
                    black_box(v);
                }
                Ok(())
            })
            .unwrap_or_else(|e| panic!("crashlab: get {reads:?}: {e}"));
    }

    fn delete(&mut self, keys: Range<u64>) {
        self.db
            .update(|tx| {
                let mut b = tx.bucket_mut(BUCKET.as_bytes())?.expect("bucket exists");
                for n in keys.clone() {
                    assert!(b.delete(&key(n))?, "crashlab: key {n} missing");
                }
                Ok(())
            })
            .unwrap_or_else(|e| panic!("crashlab: delete {keys:?}: {e}"));
    }
}

/// Concurrent puts go through `Db::batch`, the engine's group commit: callers that arrive
/// together share one write transaction and one sync (bbolt's `Batch`, with the same defaults:
/// at most 1,000 calls, the first caller waiting up to 10 ms for others).
impl Concurrent for Crashlab {
    fn put_one(&self, n: u64, value: &'static [u8]) {
        self.db
            .batch(move |tx| {
                let mut b = tx.bucket_mut(BUCKET.as_bytes())?.expect("bucket exists");
                b.put(&key(n), value)
            })
            .unwrap_or_else(|e| panic!("crashlab: batch put {n}: {e}"));
    }
}
