//! Reading a crashlab database whole, as a model.

use crate::adapter::Listing;
use crate::op::KeyRange;
use crashlab_engine::{Bucket, Cursor, Db, Error, FormatError, MemStorage, Options, ReadTx};
use crashlab_models::{BucketModel, KvModel};

/// Every item of a bucket in key order (sub-buckets as `None`).
pub(crate) fn list_bucket(b: &Bucket<'_>) -> Result<Listing, Error> {
    let mut c = b.cursor();
    let mut out = Vec::new();
    let mut it = c.first()?;
    while let Some(item) = it {
        out.push(item.to_item());
        it = c.next()?;
    }
    Ok(out)
}

/// A range as a cursor reads it: forward from a seek to `from` (or the first key) by `next`;
/// backward from the key before a seek to `to` (or the last key) by `prev`.
pub(crate) fn read_range(mut c: Cursor<'_>, range: &KeyRange) -> Result<Listing, Error> {
    let limit = range.limit.map_or(usize::MAX, |l| l as usize);
    let mut it = match (range.reverse, &range.from, &range.to) {
        (false, Some(from), _) => c.seek(&from.0)?,
        (false, None, _) => c.first()?,
        (true, _, Some(to)) => match c.seek(&to.0)? {
            Some(_) => c.prev()?,
            None => c.last()?,
        },
        (true, _, None) => c.last()?,
    };
    let mut out = Vec::new();
    while let Some(item) = it {
        if out.len() >= limit || !range.contains(item.key()) {
            break;
        }
        out.push(item.to_item());
        it = if range.reverse { c.prev()? } else { c.next()? };
    }
    Ok(out)
}

/// The whole database as a model, through one snapshot.
pub fn read_model(db: &Db) -> Result<KvModel, Error> {
    read_snapshot(&db.begin_read()?)
}

/// What a read transaction's snapshot holds, as a model.
pub fn read_snapshot(tx: &ReadTx<'_>) -> Result<KvModel, Error> {
    let mut m = KvModel::new();
    let root = tx.root()?;
    fill(&root, &mut m.root, 0)?;
    Ok(m)
}

/// Fill `into`, an empty model, with bucket `b` and its sub-buckets.
fn fill(b: &Bucket<'_>, into: &mut BucketModel, depth: usize) -> Result<(), Error> {
    into.sequence = b.sequence();
    // The cursor lists keys in order, so each map is built from a sorted sequence in one pass
    // (`BTreeMap`'s bulk build) rather than by an insert and a search per key.
    let (mut values, mut buckets) = (Vec::new(), Vec::new());
    for (k, v) in list_bucket(b)? {
        match v {
            Some(v) => values.push((k, v)),
            None if depth < crashlab_engine::limits::MAX_BUCKET_DEPTH => {
                let child = b.bucket(&k)?.ok_or(Error::BucketNotFound)?;
                let mut model = BucketModel::default();
                fill(&child, &mut model, depth + 1)?;
                buckets.push((k, model));
            }
            None => return Err(Error::BucketNotFound),
        }
    }
    into.values = values.into_iter().collect();
    into.buckets = buckets.into_iter().collect();
    Ok(())
}

/// Whether a read transaction's snapshot holds exactly `want`: what [`read_snapshot`] and a
/// comparison answer, without building the model. Every item is read and every error returned
/// as `read_snapshot` would, even after a difference: a snapshot that fails to read is an
/// error, never a difference.
pub fn snapshot_equals(tx: &ReadTx<'_>, want: &KvModel) -> Result<bool, Error> {
    bucket_equals(&tx.root()?, &want.root, 0)
}

/// [`snapshot_equals`] for one bucket and, depth first, its sub-buckets. The engine lists a
/// bucket's values and sub-buckets in one key order; the model keeps them apart, each in key
/// order, so each kind is matched against its own map as the cursor meets it.
fn bucket_equals(b: &Bucket<'_>, want: &BucketModel, depth: usize) -> Result<bool, Error> {
    let mut same = b.sequence() == want.sequence;
    let (mut values, mut buckets) = (want.values.iter(), want.buckets.iter());
    let mut c = b.cursor();
    let mut it = c.first()?;
    while let Some(item) = it {
        match item.value() {
            Some(v) => {
                same &= values
                    .next()
                    .is_some_and(|(k, w)| (&k[..], &w[..]) == (item.key(), v))
            }
            None if depth < crashlab_engine::limits::MAX_BUCKET_DEPTH => {
                let child = b.bucket(item.key())?.ok_or(Error::BucketNotFound)?;
                let wanted = buckets.next().filter(|(k, _)| k[..] == *item.key());
                let empty = BucketModel::default();
                // Read whole even when it is not the expected one, for its errors.
                let inside = bucket_equals(&child, wanted.map_or(&empty, |(_, m)| m), depth + 1)?;
                same &= wanted.is_some() && inside;
            }
            None => return Err(Error::BucketNotFound),
        }
        it = c.next()?;
    }
    Ok(same && values.next().is_none() && buckets.next().is_none())
}

/// What a reader whose snapshot meta page is `meta` reads from `image` (the page cache at a
/// crash point): the image with that meta in both slots, opened read-only — the pages a reader
/// that misses its cache reads now.
pub(crate) fn view(mut image: Vec<u8>, meta: &[u8], options: &Options) -> Result<KvModel, Error> {
    if image.len() < 2 * meta.len() {
        return Err(Error::Format(FormatError::Truncated {
            len: image.len() as u64,
            needed: 2 * meta.len() as u64,
        }));
    }
    for slot in image[..2 * meta.len()].chunks_mut(meta.len()) {
        slot.copy_from_slice(meta);
    }
    let options = Options {
        read_only: true,
        ..options.clone()
    };
    read_model(&Db::open(MemStorage::from_bytes(image), options)?)
}
