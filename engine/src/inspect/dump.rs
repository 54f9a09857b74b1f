//! Every bucket and key of a file, in the JSON shape of the bbolt fixtures
//! (`corpus/bbolt/*.json`): `{"page_size": N, "buckets": {PATH: {KEY: VALUE}}, "sequences":
//! {PATH: N}}`, keys and values in lower-case hex, a bucket's PATH its hex-encoded names from the
//! top level down joined by `/`.

use super::walk::{Visitor, Walk};
use super::Image;
use crate::check::Problem;
use crate::error::Result;
use crate::pageset::PageSet;
use crate::types::PageSpan;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// A database's full contents.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Dump {
    pub page_size: u32,
    /// Bucket path → key → value. Every bucket is listed, an empty one with no keys. The root
    /// bucket (path `""`) is listed only when it holds plain keys, which bbolt never writes.
    pub buckets: BTreeMap<String, BTreeMap<String, String>>,
    /// Non-zero bucket sequences by path.
    #[serde(default)]
    pub sequences: BTreeMap<String, u64>,
}

/// Lower-case hex, two digits a byte.
pub fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        s.push(char::from(DIGITS[usize::from(b >> 4)]));
        s.push(char::from(DIGITS[usize::from(b & 0xf)]));
    }
    s
}

/// Plain keys by bucket index, as the walk finds them, on pages outside `avoid`.
#[derive(Default)]
struct Keys<'a> {
    keys: BTreeMap<usize, BTreeMap<String, String>>,
    avoid: Option<&'a PageSet>,
}

impl Visitor for Keys<'_> {
    fn enters(&self, span: PageSpan) -> bool {
        self.avoid
            .is_none_or(|a| a.runs_within(span.start, span.end()).next().is_none())
    }

    fn item(&mut self, bucket: usize, key: &[u8], value: &[u8]) {
        self.keys
            .entry(bucket)
            .or_default()
            .insert(hex(key), hex(value));
    }
}

/// The contents of the meta in use, and the damage met on the way: with damage, the dump holds
/// what could be read and misses what lies under the damaged pages.
pub fn dump(image: &Image) -> Result<(Dump, Vec<Problem>)> {
    let (dump, walk) = dump_walk(image, None)?;
    Ok((dump, walk.into_problems()))
}

/// What a reader can reach without entering any page of `avoid`: the contents the tolerant walk
/// reads then, and every page it entered (the metas not included). A page reached only through
/// `avoid` is in neither, so this tells apart what damage at `avoid` can change from what it
/// cannot.
pub fn dump_avoiding(image: &Image, avoid: &PageSet) -> Result<(Dump, PageSet)> {
    let (dump, walk) = dump_walk(image, Some(avoid))?;
    Ok((dump, walk.reached))
}

fn dump_walk(image: &Image, avoid: Option<&PageSet>) -> Result<(Dump, Walk)> {
    let mut keys = Keys {
        keys: BTreeMap::new(),
        avoid,
    };
    let walk = super::walk::walk(image.pager(), &image.meta(), &mut keys)?;
    let mut dump = Dump {
        page_size: image.page_size(),
        ..Dump::default()
    };
    for (index, bucket) in walk.buckets.iter().enumerate() {
        let path = path_hex(&walk, index);
        let keys = keys.keys.remove(&index).unwrap_or_default();
        if bucket.sequence != 0 {
            dump.sequences.insert(path.clone(), bucket.sequence);
        }
        if index != 0 || !keys.is_empty() {
            dump.buckets.insert(path, keys);
        }
    }
    Ok((dump, walk))
}

fn path_hex(walk: &Walk, index: usize) -> String {
    let names: Vec<String> = walk.buckets.path(index).into_iter().map(hex).collect();
    names.join("/")
}
