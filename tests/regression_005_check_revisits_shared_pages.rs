//! Regression 005, found while writing `crashlab db` (its fuzz test asks every command to return
//! on any file, and `check` is one of them).
//!
//! Postmortem: `Db::check` reported a page reached twice but then descended into it again. In a
//! file where the elements of a branch all point at one child, and that child's elements all point
//! at one grandchild, and so on, the walk visited `fanout ^ depth` pages: 20 elements over 12
//! levels is 4·10^15 visits from a 20-page file, so `check` never returned on a file a few
//! kilobytes long. The depth limit bounded the recursion, not the work. The fix: a page already
//! reached is reported and not entered again, so the walk is linear in the pages below the
//! high-water mark. The test builds the shared-child tree by hand and counts node visits.
//!
//! Cursors had the same exposure (left open when `check` was fixed): stepping past a shared leaf
//! walked it again once per path. A cursor step that does not move past the key it started from
//! is now `Corrupted`, so iteration stops at the first repeat.

use crashlab_engine::{Db, MemStorage, Options, PageId, TxId};
use crashlab_format::freelist;
use crashlab_format::meta::Meta;
use crashlab_format::node::{Body, BranchItem, Child, LeafItem, Node};

const PS: u32 = 512;

fn node(body: Body) -> Node {
    Node::built(body)
}

fn put_page(file: &mut Vec<u8>, id: u64, n: &Node) {
    let at = id as usize * PS as usize;
    file.resize(file.len().max(at + PS as usize), 0);
    n.encode(&mut file[at..at + PS as usize], PageId(id), PS)
        .expect("a node the test built is encodable");
}

/// Root bucket (page 3) → bucket `b` rooted at page 4; pages 4.. are `levels` branches whose
/// `fanout` elements all point at the next page; the last page is a one-key leaf.
fn shared_child_file(fanout: u8, levels: u64) -> Vec<u8> {
    let leaf_page = 4 + levels;
    let high_water = leaf_page + 1;
    let mut file = Vec::new();
    for txid in 0..2 {
        let meta = Meta {
            high_water: PageId(high_water),
            ..Meta::fresh(PS, TxId(txid))
        };
        file.extend_from_slice(&meta.encode_page());
    }
    file.extend_from_slice(&freelist::encode_page(PageId(2), &[], PS));
    let mut bucket = vec![0u8; 16];
    bucket[..8].copy_from_slice(&4u64.to_le_bytes());
    let root = Body::Leaf(vec![LeafItem::new(1, b"b", &bucket)]);
    put_page(&mut file, 3, &node(root));
    for level in 0..levels {
        let items = (0..fanout)
            .map(|i| BranchItem {
                key: vec![b'a' + i],
                child: Child::Page(PageId(5 + level)),
            })
            .collect();
        put_page(&mut file, 4 + level, &node(Body::Branch(items)));
    }
    let leaf = Body::Leaf(vec![LeafItem::new(0, b"a", b"v")]);
    put_page(&mut file, leaf_page, &node(leaf));
    file
}

/// The shared-child file opened read-only.
fn open_shared(fanout: u8, levels: u64) -> Db {
    let storage = MemStorage::from_bytes(shared_child_file(fanout, levels));
    let options = Options {
        read_only: true,
        ..Options::default()
    };
    Db::open(storage, options).unwrap()
}

/// Pages `f` visited (cache hits and reads).
fn visits<T>(db: &Db, f: impl FnOnce(&Db) -> T) -> (T, u64) {
    let before = db.counters();
    let out = f(db);
    let after = db.counters();
    let n =
        (after.page_cache_hits + after.pages_read) - (before.page_cache_hits + before.pages_read);
    (out, n)
}

#[test]
fn check_enters_a_shared_page_once() {
    let (fanout, levels) = (4, 8); // 4^8 = 65,536 visits before the fix; 10 pages after it
    let db = open_shared(fanout, levels);
    let (problems, visits) = visits(&db, |db| db.check().unwrap());
    assert!(
        visits < 50,
        "check visited {visits} pages of a 13-page file"
    );
    assert!(
        problems.iter().any(|p| p.message.contains("reached twice")),
        "{problems:?}"
    );
}

/// The same shape through a cursor: after the first key, the next step would walk the shared
/// leaf again once per path to it (4^8 times). A step that does not move past the key it started
/// from is now an error naming the page, found at once.
#[test]
fn a_cursor_refuses_to_walk_a_shared_leaf_twice() {
    for (fanout, levels) in [(4, 8), (20, 12)] {
        let db = open_shared(fanout, levels);
        let (walked, visits) = visits(&db, |db| {
            db.view(|tx| {
                let b = tx.bucket(b"b")?.expect("bucket b");
                let mut c = b.cursor();
                let mut keys = vec![c.first()?.expect("a first key").key().to_vec()];
                while let Some(e) = c.next()? {
                    let k = e.key().to_vec();
                    keys.push(k);
                }
                Ok(keys)
            })
        });
        let e = match walked {
            Ok(keys) => panic!("a shared leaf walked as {} keys", keys.len()),
            Err(e) => e,
        };
        assert!(e.to_string().contains("out of order"), "{e}");
        assert!(visits < 100, "{visits} page visits for fanout {fanout}");
    }
}
