//! `KvModel`: nested buckets as ordered maps — the truth every engine read is compared with.
//!
//! Errors mirror the engine's rules (bbolt's): a key holds either a value or a bucket; creating
//! an existing bucket, or deleting a missing one, fails; the root holds only buckets.

use std::collections::BTreeMap;

/// Why a model operation was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ModelError {
    BucketNotFound,
    BucketExists,
    /// The key holds a value where a bucket was named, or a bucket where a value was.
    Incompatible,
    /// A bucket nested deeper than [`BUCKET_DEPTH_MAX`].
    TooDeep,
    /// A key or bucket name longer than [`KEY_LEN_MAX`].
    KeyTooLarge,
}

/// How deep buckets may nest (a top-level bucket is at depth 1): bbolt has no limit, crashlab's
/// engine refuses a bucket deeper than this, and the model follows the engine it is compared
/// with (an engine with flat buckets never comes near it).
pub const BUCKET_DEPTH_MAX: usize = 64;

/// The longest key or bucket name: bbolt's `MaxKeySize`, which crashlab's engine keeps. A put or
/// a bucket created under a longer one is refused. Only engines that declare this limit are
/// given such keys (the simulator's `Capabilities::refuses_long_keys`); the model follows them.
pub const KEY_LEN_MAX: usize = 32_768;

fn check_key(key: &[u8]) -> Result<(), ModelError> {
    if key.len() > KEY_LEN_MAX {
        return Err(ModelError::KeyTooLarge);
    }
    Ok(())
}

/// One bucket: its values, its sub-buckets and its sequence.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BucketModel {
    pub values: BTreeMap<Vec<u8>, Vec<u8>>,
    pub buckets: BTreeMap<Vec<u8>, BucketModel>,
    pub sequence: u64,
}

/// The whole database: the root bucket (which holds only buckets).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct KvModel {
    pub root: BucketModel,
}

impl KvModel {
    pub fn new() -> KvModel {
        KvModel::default()
    }

    pub fn bucket(&self, path: &[Vec<u8>]) -> Option<&BucketModel> {
        path.iter()
            .try_fold(&self.root, |b, name| b.buckets.get(name))
    }

    pub fn bucket_mut(&mut self, path: &[Vec<u8>]) -> Option<&mut BucketModel> {
        path.iter()
            .try_fold(&mut self.root, |b, name| b.buckets.get_mut(name))
    }

    fn parent_and_name<'a>(
        &mut self,
        path: &'a [Vec<u8>],
    ) -> Result<(&mut BucketModel, &'a [u8]), ModelError> {
        let (name, parent) = path.split_last().ok_or(ModelError::BucketNotFound)?;
        let parent = self.bucket_mut(parent).ok_or(ModelError::BucketNotFound)?;
        Ok((parent, name))
    }

    pub fn create_bucket(&mut self, path: &[Vec<u8>]) -> Result<(), ModelError> {
        let (parent, name) = self.parent_and_name(path)?;
        check_key(name)?;
        if parent.buckets.contains_key(name) {
            return Err(ModelError::BucketExists);
        }
        if parent.values.contains_key(name) {
            return Err(ModelError::Incompatible);
        }
        if path.len() > BUCKET_DEPTH_MAX {
            return Err(ModelError::TooDeep);
        }
        parent.buckets.insert(name.to_vec(), BucketModel::default());
        Ok(())
    }

    pub fn delete_bucket(&mut self, path: &[Vec<u8>]) -> Result<(), ModelError> {
        let (parent, name) = self.parent_and_name(path)?;
        if parent.values.contains_key(name) {
            return Err(ModelError::Incompatible);
        }
        parent
            .buckets
            .remove(name)
            .map(|_| ())
            .ok_or(ModelError::BucketNotFound)
    }

    pub fn put(&mut self, path: &[Vec<u8>], key: &[u8], value: &[u8]) -> Result<(), ModelError> {
        let b = self.bucket_mut(path).ok_or(ModelError::BucketNotFound)?;
        check_key(key)?;
        if b.buckets.contains_key(key) {
            return Err(ModelError::Incompatible);
        }
        b.values.insert(key.to_vec(), value.to_vec());
        Ok(())
    }

    /// Remove a value; `Ok(true)` when it existed.
    pub fn delete(&mut self, path: &[Vec<u8>], key: &[u8]) -> Result<bool, ModelError> {
        let b = self.bucket_mut(path).ok_or(ModelError::BucketNotFound)?;
        if b.buckets.contains_key(key) {
            return Err(ModelError::Incompatible);
        }
        Ok(b.values.remove(key).is_some())
    }

    /// Set a bucket's sequence.
    pub fn set_sequence(&mut self, path: &[Vec<u8>], value: u64) -> Result<(), ModelError> {
        self.bucket_mut(path)
            .ok_or(ModelError::BucketNotFound)?
            .sequence = value;
        Ok(())
    }

    /// Increment a bucket's sequence (wrapping, as bbolt's does) and return the new value.
    pub fn next_sequence(&mut self, path: &[Vec<u8>]) -> Result<u64, ModelError> {
        let b = self.bucket_mut(path).ok_or(ModelError::BucketNotFound)?;
        b.sequence = b.sequence.wrapping_add(1);
        Ok(b.sequence)
    }

    pub fn get(&self, path: &[Vec<u8>], key: &[u8]) -> Option<&[u8]> {
        self.bucket(path)?.values.get(key).map(Vec::as_slice)
    }

    /// Every bucket by path (names from the top down), for whole-state comparisons.
    pub fn flatten(&self) -> BTreeMap<Vec<Vec<u8>>, &BucketModel> {
        let mut out = BTreeMap::new();
        let mut stack: Vec<(Vec<Vec<u8>>, &BucketModel)> = vec![(Vec::new(), &self.root)];
        while let Some((path, b)) = stack.pop() {
            for (name, child) in &b.buckets {
                let mut p = path.clone();
                p.push(name.clone());
                stack.push((p, child));
            }
            if !path.is_empty() {
                out.insert(path, b);
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(names: &[&str]) -> Vec<Vec<u8>> {
        names.iter().map(|n| n.as_bytes().to_vec()).collect()
    }

    #[test]
    fn buckets_and_values_follow_the_rules() {
        let mut m = KvModel::new();
        assert_eq!(
            m.put(&p(&["a"]), b"k", b"v"),
            Err(ModelError::BucketNotFound)
        );
        m.create_bucket(&p(&["a"])).unwrap();
        assert_eq!(m.create_bucket(&p(&["a"])), Err(ModelError::BucketExists));
        m.put(&p(&["a"]), b"k", b"v").unwrap();
        assert_eq!(
            m.create_bucket(&p(&["a", "k"])),
            Err(ModelError::Incompatible)
        );
        m.create_bucket(&p(&["a", "b"])).unwrap();
        assert_eq!(m.put(&p(&["a"]), b"b", b"x"), Err(ModelError::Incompatible));
        assert_eq!(m.get(&p(&["a"]), b"k"), Some(&b"v"[..]));
        assert_eq!(m.delete(&p(&["a"]), b"k"), Ok(true));
        assert_eq!(m.delete(&p(&["a"]), b"k"), Ok(false));
        assert_eq!(m.flatten().len(), 2);
        m.delete_bucket(&p(&["a"])).unwrap();
        assert!(m.flatten().is_empty());
        assert_eq!(m.delete_bucket(&p(&["a"])), Err(ModelError::BucketNotFound));
    }

    #[test]
    fn nesting_stops_at_the_limit_and_sequences_count() {
        let mut m = KvModel::new();
        let mut path = Vec::new();
        for depth in 1..=BUCKET_DEPTH_MAX {
            path.push(format!("n{depth}").into_bytes());
            m.create_bucket(&path).unwrap();
        }
        path.push(b"past".to_vec());
        assert_eq!(m.create_bucket(&path), Err(ModelError::TooDeep));
        path.pop();
        assert_eq!(m.next_sequence(&path), Ok(1));
        m.set_sequence(&path, u64::MAX).unwrap();
        assert_eq!(m.next_sequence(&path), Ok(0), "the sequence wraps");
        assert_eq!(
            m.next_sequence(&p(&["missing"])),
            Err(ModelError::BucketNotFound)
        );
    }

    #[test]
    fn keys_and_bucket_names_stop_at_the_limit() {
        let mut m = KvModel::new();
        let at = vec![b'k'; KEY_LEN_MAX];
        let past = vec![b'k'; KEY_LEN_MAX + 1];
        assert_eq!(
            m.create_bucket(std::slice::from_ref(&past)),
            Err(ModelError::KeyTooLarge)
        );
        let b = [at.clone()];
        m.create_bucket(&b).unwrap();
        assert_eq!(m.put(&b, &past, b"v"), Err(ModelError::KeyTooLarge));
        m.put(&b, &at, b"v").unwrap();
        assert_eq!(m.get(&b, &at), Some(&b"v"[..]));
        assert_eq!(m.get(&b, &past), None);
        assert_eq!(
            m.delete(&b, &past),
            Ok(false),
            "a delete never refuses a long key"
        );
        let missing = [b"missing".to_vec()];
        assert_eq!(
            m.put(&missing, &past, b"v"),
            Err(ModelError::BucketNotFound),
            "the bucket is looked up before the key is measured, as the engine does"
        );
    }
}
