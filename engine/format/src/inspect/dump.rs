//! Every bucket and key of a file, in the JSON shape of the bbolt fixtures
//! (`corpus/bbolt/*.json`): `{"page_size": N, "buckets": {PATH: {KEY: VALUE}}, "sequences":
//! {PATH: N}}`, keys and values in lower-case hex, a bucket's PATH its hex-encoded names from the
//! top level down joined by `/`.

use super::walk::{Visitor, Walk};
use super::Image;
use crate::error::Result;
use crate::problem::Problem;
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

/// The bytes of `s` when it is hex, two digits a byte in either case (what [`hex`] writes);
/// `None` for an odd number of digits or anything that is not one.
pub fn unhex(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) || !s.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    // All ASCII, so slicing two bytes at a time is sound.
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).ok())
        .collect()
}

/// Plain keys by bucket index, as the walk finds them.
#[derive(Default)]
struct Keys(BTreeMap<usize, BTreeMap<String, String>>);

impl Visitor for Keys {
    fn item(&mut self, bucket: usize, key: &[u8], value: &[u8]) {
        self.0
            .entry(bucket)
            .or_default()
            .insert(hex(key), hex(value));
    }
}

/// The contents of the meta in use, and the damage met on the way: with damage, the dump holds
/// what could be read and misses what lies under the damaged pages.
pub fn dump(image: &Image) -> Result<(Dump, Vec<Problem>)> {
    let mut keys = Keys::default();
    let walk = super::walk::walk(image.reader(), &image.meta(), &mut keys)?;
    let mut dump = Dump {
        page_size: image.page_size(),
        ..Dump::default()
    };
    for (index, bucket) in walk.buckets.iter().enumerate() {
        let path = path_hex(&walk, index);
        let keys = keys.0.remove(&index).unwrap_or_default();
        if bucket.sequence != 0 {
            dump.sequences.insert(path.clone(), bucket.sequence);
        }
        if index != 0 || !keys.is_empty() {
            dump.buckets.insert(path, keys);
        }
    }
    Ok((dump, walk.into_problems()))
}

fn path_hex(walk: &Walk, index: usize) -> String {
    let names: Vec<String> = walk.buckets.path(index).into_iter().map(hex).collect();
    names.join("/")
}

#[cfg(test)]
mod tests {
    use super::{hex, unhex};

    #[test]
    fn unhex_reads_what_hex_writes_and_nothing_else() {
        let every_byte: Vec<u8> = (0..=255).collect();
        assert_eq!(unhex(&hex(&every_byte)), Some(every_byte));
        assert_eq!(unhex(""), Some(Vec::new()));
        assert_eq!(unhex("0aFf"), Some(vec![0x0a, 0xff]));
        for bad in ["0", "abc", "0g", "zz", "0x00", " 00", "é0"] {
            assert_eq!(unhex(bad), None, "{bad:?}");
        }
    }
}
