//! Hash maps keyed by page id, with a fixed, unseeded hash (a multiply by an odd constant), so
//! that they behave the same on every run. No caller iterates one, so its order cannot leak into
//! results; they stand where an id is looked up far more often than ranges are walked (the page
//! cache, the freelist's allocation records).

use crashlab_format::types::PageId;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

#[derive(Default)]
pub(crate) struct PageIdHasher(u64);

impl Hasher for PageIdHasher {
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(u64::from(b));
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0.rotate_left(5) ^ n).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

pub(crate) type PageMap<V> = HashMap<PageId, V, BuildHasherDefault<PageIdHasher>>;
