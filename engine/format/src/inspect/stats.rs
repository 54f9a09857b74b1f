//! Statistics of a file: pages and bytes by use, how full branch and leaf pages are, each
//! bucket's tree depth, the free set, inline buckets.

use super::survey::{PageUse, Survey};
use super::walk::{Buckets, PageVisit, Visitor};
use super::Image;
use crate::error::Result;
use crate::problem::Problem;
use crate::types::PageId;

/// Branch or leaf nodes: how many, how many pages, how full.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NodeUsage {
    pub nodes: u64,
    /// Pages, overflow pages included.
    pub pages: u64,
    pub elements: u64,
    /// Bytes the nodes' headers, elements, keys and values take.
    pub used_bytes: u64,
}

impl NodeUsage {
    pub fn overflow_pages(&self) -> u64 {
        self.pages - self.nodes
    }

    /// Used bytes over the bytes of the pages they occupy, in percent (0 without pages).
    pub fn fill_percent(&self, page_size: u32) -> f64 {
        let bytes = self.pages * u64::from(page_size);
        if bytes == 0 {
            return 0.0;
        }
        self.used_bytes as f64 * 100.0 / bytes as f64
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Stats {
    pub page_size: u32,
    pub file_len: u64,
    pub high_water: PageId,
    pub branch: NodeUsage,
    pub leaf: NodeUsage,
    /// Pages of each other use below the high-water mark.
    pub meta_pages: u64,
    pub freelist_pages: u64,
    pub free_pages: u64,
    pub pending_pages: u64,
    pub unreachable_pages: u64,
    pub damaged_pages: u64,
    /// Whether the meta in use points at a freelist page (otherwise open rebuilds the free set).
    pub freelist_persisted: bool,
    /// Every bucket, the root bucket first.
    pub buckets: Buckets,
    /// Damage met on the way (run `check` for the full list).
    pub problems: Vec<Problem>,
}

impl Stats {
    pub fn inline_buckets(&self) -> usize {
        self.buckets.iter().filter(|b| b.root.is_none()).count()
    }
}

#[derive(Default)]
struct Usage {
    branch: NodeUsage,
    leaf: NodeUsage,
}

impl Visitor for Usage {
    fn page(&mut self, v: &PageVisit<'_>) {
        let usage = if v.node.is_leaf() {
            &mut self.leaf
        } else {
            &mut self.branch
        };
        usage.nodes += 1;
        usage.pages += v.span.count;
        usage.elements += v.node.len() as u64;
        usage.used_bytes += v.node.size() as u64;
    }
}

pub fn stats(image: &Image) -> Result<Stats> {
    let mut usage = Usage::default();
    let survey = Survey::take(image, &mut usage)?;
    let meta = image.meta();
    let mut s = Stats {
        page_size: image.page_size(),
        file_len: image.file_len(),
        high_water: meta.high_water,
        branch: usage.branch,
        leaf: usage.leaf,
        meta_pages: 0,
        freelist_pages: 0,
        free_pages: 0,
        pending_pages: 0,
        unreachable_pages: 0,
        damaged_pages: 0,
        freelist_persisted: survey.free.persisted,
        buckets: survey.walk.buckets.clone(),
        problems: Vec::new(),
    };
    for (span, kind) in survey.segments(meta.high_water) {
        let pages = span.count;
        match kind {
            Some(PageUse::Meta) => s.meta_pages += pages,
            Some(PageUse::Freelist) => s.freelist_pages += pages,
            Some(PageUse::Free) => s.free_pages += pages,
            Some(PageUse::Pending) => s.pending_pages += pages,
            Some(PageUse::Unreachable) => s.unreachable_pages += pages,
            Some(PageUse::Damaged) => s.damaged_pages += pages,
            Some(PageUse::Branch | PageUse::Leaf) | None => {}
        }
    }
    s.problems = survey.walk.into_problems();
    Ok(s)
}
