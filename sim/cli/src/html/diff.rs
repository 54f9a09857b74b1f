//! The difference between a recovered state and an allowed one, by bucket and key: what the
//! recovery lacks (missing), what it has that the state does not (extra), and what it holds
//! under another value (wrong value).

use crashlab_models::{BucketModel, KvModel};

/// How one entry differs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Change {
    Missing,
    Extra,
    WrongValue,
}

impl Change {
    pub fn name(self) -> &'static str {
        match self {
            Change::Missing => "missing",
            Change::Extra => "extra",
            Change::WrongValue => "wrong value",
        }
    }
}

/// One differing entry: a key, a nested bucket or a bucket's sequence.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    pub change: Change,
    /// The bucket holding it.
    pub bucket: Vec<Vec<u8>>,
    pub what: Item,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Item {
    Key {
        key: Vec<u8>,
        expected: Option<Vec<u8>>,
        recovered: Option<Vec<u8>>,
    },
    Bucket(Vec<u8>),
    Sequence {
        expected: u64,
        recovered: u64,
    },
}

/// Every difference of `recovered` from `expected`, buckets in order, at most `max` entries.
pub fn diff(expected: &KvModel, recovered: &KvModel, max: usize) -> Vec<Entry> {
    let mut out = Vec::new();
    bucket(
        &mut Vec::new(),
        &expected.root,
        &recovered.root,
        &mut out,
        max,
    );
    out
}

fn bucket(
    path: &mut Vec<Vec<u8>>,
    e: &BucketModel,
    r: &BucketModel,
    out: &mut Vec<Entry>,
    max: usize,
) {
    let push = |out: &mut Vec<Entry>, path: &[Vec<u8>], change, what| {
        if out.len() < max {
            out.push(Entry {
                change,
                bucket: path.to_vec(),
                what,
            });
        }
    };
    if e.sequence != r.sequence {
        let what = Item::Sequence {
            expected: e.sequence,
            recovered: r.sequence,
        };
        push(out, path, Change::WrongValue, what);
    }
    let keys = e.values.keys().chain(r.values.keys());
    let keys: std::collections::BTreeSet<&Vec<u8>> = keys.collect();
    for k in keys {
        let (ev, rv) = (e.values.get(k), r.values.get(k));
        let change = match (ev, rv) {
            (Some(_), None) => Change::Missing,
            (None, Some(_)) => Change::Extra,
            (Some(a), Some(b)) if a != b => Change::WrongValue,
            _ => continue,
        };
        let what = Item::Key {
            key: k.clone(),
            expected: ev.cloned(),
            recovered: rv.cloned(),
        };
        push(out, path, change, what);
    }
    let names = e.buckets.keys().chain(r.buckets.keys());
    let names: std::collections::BTreeSet<&Vec<u8>> = names.collect();
    for n in names {
        match (e.buckets.get(n), r.buckets.get(n)) {
            (Some(_), None) => push(out, path, Change::Missing, Item::Bucket(n.clone())),
            (None, Some(_)) => push(out, path, Change::Extra, Item::Bucket(n.clone())),
            (Some(a), Some(b)) => {
                path.push(n.clone());
                bucket(path, a, b, out, max);
                path.pop();
            }
            (None, None) => unreachable!("a name comes from one of the two"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model(entries: &[(&str, &str, &str)]) -> KvModel {
        let mut m = KvModel::new();
        for (b, k, v) in entries {
            let bucket = m.root.buckets.entry(b.as_bytes().to_vec()).or_default();
            bucket
                .values
                .insert(k.as_bytes().to_vec(), v.as_bytes().to_vec());
        }
        m
    }

    #[test]
    fn a_diff_names_missing_extra_and_wrong_entries_by_bucket() {
        let expected = model(&[("a", "k1", "x"), ("a", "k2", "y"), ("b", "k3", "z")]);
        let mut recovered = model(&[("a", "k2", "Y"), ("a", "k4", "w")]);
        recovered
            .root
            .buckets
            .insert(b"c".to_vec(), BucketModel::default());
        let d = diff(&expected, &recovered, 100);
        let got: Vec<(Change, String)> = d
            .iter()
            .map(|e| {
                let what = match &e.what {
                    Item::Key { key, .. } => String::from_utf8_lossy(key).into_owned(),
                    Item::Bucket(n) => format!("bucket {}", String::from_utf8_lossy(n)),
                    Item::Sequence { .. } => "sequence".into(),
                };
                (e.change, what)
            })
            .collect();
        assert_eq!(
            got,
            vec![
                (Change::Missing, "k1".into()),
                (Change::WrongValue, "k2".into()),
                (Change::Extra, "k4".into()),
                (Change::Missing, "bucket b".into()),
                (Change::Extra, "bucket c".into()),
            ]
        );
        assert!(diff(&expected, &expected, 100).is_empty());
        assert_eq!(diff(&expected, &recovered, 2).len(), 2);
    }
}
