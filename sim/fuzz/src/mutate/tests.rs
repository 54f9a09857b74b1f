use super::*;
use crate::bases::{default_fixtures, Base, BasePool};
use crate::edit::apply_all;
use std::collections::BTreeSet;

fn pool() -> BasePool {
    BasePool::new(default_fixtures())
}

#[test]
fn fixture_layouts_find_every_structure() {
    let mut pool = pool();
    let inline = pool
        .get(&Base::Fixture {
            name: "inline".into(),
        })
        .unwrap();
    let l = inline.layout.as_ref().expect("inline.db parses");
    assert_eq!(l.page_size, 4096);
    assert!(l.nodes.iter().any(|n| n.page.is_none()), "inline images");
    assert!(l.nodes.iter().any(|n| n.branch), "a branch page");
    assert!(l.buckets.iter().any(|b| b.root == 0) && l.buckets.iter().any(|b| b.root != 0));
    assert!(l.freelist.is_some());
    let nofreelist = pool
        .get(&Base::Fixture {
            name: "nofreelist".into(),
        })
        .unwrap();
    assert!(nofreelist.layout.as_ref().unwrap().freelist.is_none());
}

#[test]
fn every_kind_is_drawn_and_edits_replay_to_the_same_bytes() {
    let mut pool = pool();
    let mut kinds = BTreeSet::new();
    for i in 0..400u64 {
        let base = if i % 2 == 0 {
            Base::Fixture {
                name: "inline".into(),
            }
        } else {
            Base::Generated { seed: i % 7 }
        };
        let file = pool.get(&base).unwrap();
        let mut image = FileImage::from_bytes(file.bytes.clone());
        let mut rng = FuzzRng::new(i);
        let edits = mutate(file.layout.as_ref(), &mut image, &mut rng, 3);
        assert_eq!(edits.len(), 3);
        kinds.extend(edits.iter().map(|e| e.kind));
        let mut again = FileImage::from_bytes(file.bytes.clone());
        apply_all(&mut again, &edits);
        assert_eq!(again, image, "input {i}: the edits replay");
    }
    let missing: Vec<_> = MutationKind::ALL
        .iter()
        .filter(|k| !kinds.contains(k))
        .collect();
    assert!(missing.is_empty(), "never drawn: {missing:?}");
}

#[test]
fn meta_edits_keep_the_checksum_valid() {
    use crashlab_format::meta::Meta;
    use crashlab_format::types::PageId;
    let mut pool = pool();
    let file = pool.get(&Base::Generated { seed: 3 }).unwrap();
    let l = file.layout.as_ref().unwrap();
    let mut recomputed = 0;
    for i in 0..200 {
        let mut image = FileImage::from_bytes(file.bytes.clone());
        let e = file::meta_field(l, &image, &mut FuzzRng::new(i));
        apply_all(&mut image, std::slice::from_ref(&e));
        for slot in [0, 1] {
            let mut buf = vec![0u8; 80];
            image.read_at(l.offset(slot), &mut buf).unwrap();
            let torn = e.note.contains("old checksum kept");
            // A torn edit may rewrite a field to its old value: then the checksum still holds.
            if !torn {
                assert!(Meta::checksum_matches(&buf), "{}", e.note);
            }
            recomputed += usize::from(!torn && Meta::decode(&buf, PageId(slot)).is_ok());
        }
    }
    assert!(
        recomputed > 100,
        "most edited metas still validate: {recomputed}"
    );
}

#[test]
fn deep_stacks_of_mutations_never_panic_the_mutators() {
    // Later mutations read fields an earlier one set to anything (u64::MAX included).
    let mut pool = pool();
    for i in 0..3000u64 {
        let base = match i % 3 {
            0 => Base::Fixture {
                name: "inline".into(),
            },
            1 => Base::Fixture {
                name: "pagesize1k".into(),
            },
            _ => Base::Generated { seed: i % 11 },
        };
        let file = pool.get(&base).unwrap();
        let mut image = FileImage::from_bytes(file.bytes.clone());
        mutate(file.layout.as_ref(), &mut image, &mut FuzzRng::new(i), 12);
    }
}

#[test]
fn meta_bytes_are_the_engines_encoding() {
    use crashlab_format::meta::Meta;
    use crashlab_format::types::TxId;
    for txid in [0, 1, 7, 1 << 40] {
        let m = Meta::fresh(4096, TxId(txid));
        assert_eq!(file::meta_bytes(&m), m.encode());
    }
}
