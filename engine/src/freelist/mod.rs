//! Free-page management. (API stub: the implementation lands with the freelist work.)

use crate::error::Result;
use crate::types::{PageId, PageSpan, TxId};
use serde::{Deserialize, Serialize};

/// Which free-set implementation a database uses.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum FreelistKind {
    #[default]
    Array,
    Hashmap,
}

/// Deterministic cost counters of the freelist.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FreelistCounters {
    pub allocate_calls: u64,
    pub allocate_scan_steps: u64,
}

pub struct Freelist {
    _kind: FreelistKind,
}

#[allow(unused_variables, clippy::new_without_default)]
impl Freelist {
    pub fn new(kind: FreelistKind) -> Freelist {
        unimplemented!()
    }
    pub fn kind(&self) -> FreelistKind {
        unimplemented!()
    }
    pub fn init(&mut self, free_ids: &[PageId]) {
        unimplemented!()
    }
    pub fn reload(&mut self, ids: &[PageId]) {
        unimplemented!()
    }
    pub fn allocate(&mut self, txid: TxId, n: u64) -> Option<PageId> {
        unimplemented!()
    }
    pub fn free(&mut self, txid: TxId, span: PageSpan) {
        unimplemented!()
    }
    pub fn release_pending(&mut self, readers: &[TxId]) {
        unimplemented!()
    }
    pub fn rollback(&mut self, txid: TxId) {
        unimplemented!()
    }
    pub fn free_count(&self) -> u64 {
        unimplemented!()
    }
    pub fn pending_count(&self) -> u64 {
        unimplemented!()
    }
    pub fn free_ids(&self) -> Vec<PageId> {
        unimplemented!()
    }
    pub fn pending_ids(&self) -> Vec<PageId> {
        unimplemented!()
    }
    pub fn all_ids(&self) -> Vec<PageId> {
        unimplemented!()
    }
    pub fn counters(&self) -> FreelistCounters {
        unimplemented!()
    }
}

pub fn page_count_for(id_count: u64, page_size: u32) -> u64 {
    unimplemented!()
}
pub fn encode_page(start: PageId, ids: &[PageId], page_size: u32) -> Vec<u8> {
    unimplemented!()
}
pub fn decode_page(buf: &[u8], page: PageId, high_water: PageId) -> Result<Vec<PageId>> {
    unimplemented!()
}
