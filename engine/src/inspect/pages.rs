//! The page map, one entry per page or run of pages (what `bbolt pages` lists), and one page's
//! decoded contents (what `bbolt page` shows).

pub use super::survey::PageUse;
use super::survey::Survey;
use super::walk::{Buckets, PageVisit, Visitor};
use super::Image;
use crate::check::Problem;
use crate::error::{Corruption, Error, Result};
use crate::freelist;
use crate::meta::Meta;
use crate::node::{Body, BranchItem, LeafItem, Node};
use crate::page::{PageHeader, PageKind};
use crate::types::PageId;
use std::collections::BTreeMap;

/// A page, or a run of pages of one use.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PageRun {
    pub start: PageId,
    /// A node with its overflow pages, or consecutive free, pending or unreachable pages.
    pub pages: u64,
    pub kind: PageUse,
    /// Elements of a branch or leaf, ids listed by a freelist page; 0 otherwise.
    pub count: u64,
    /// Overflow pages after the first (branch, leaf and freelist pages); 0 otherwise.
    pub overflow: u64,
    /// The bucket owning a branch or leaf page: an index into [`PageMap::buckets`].
    pub bucket: Option<usize>,
}

pub struct PageMap {
    pub page_size: u32,
    pub high_water: PageId,
    /// Whole pages in the file; those at or past the high-water mark hold nothing.
    pub file_pages: u64,
    /// Every page below the high-water mark, in order.
    pub runs: Vec<PageRun>,
    pub buckets: Buckets,
    /// Damage met on the way (run `check` for the full list).
    pub problems: Vec<Problem>,
}

/// The branch and leaf pages the walk entered, by first page.
#[derive(Default)]
struct Nodes(BTreeMap<u64, PageRun>);

impl Visitor for Nodes {
    fn page(&mut self, v: &PageVisit<'_>) {
        let kind = if v.node.is_leaf() {
            PageUse::Leaf
        } else {
            PageUse::Branch
        };
        let run = PageRun {
            start: v.span.start,
            pages: v.span.count,
            kind,
            count: v.node.len() as u64,
            overflow: v.span.overflow(),
            bucket: Some(v.bucket),
        };
        self.0.insert(v.span.start.0, run);
    }
}

/// Every page below the high-water mark of the meta in use.
pub fn page_map(image: &Image) -> Result<PageMap> {
    let mut nodes = Nodes::default();
    let survey = Survey::take(image, &mut nodes)?;
    let high_water = image.meta().high_water;
    let mut runs = Vec::new();
    let mut p = 0;
    while p < high_water.0 {
        let run = match survey.use_of(p) {
            // An overflow page of a node that overlaps another: `check` names it.
            None => nodes.0.remove(&p),
            Some(PageUse::Freelist) => survey.free.span.map(|s| PageRun {
                start: PageId(p),
                pages: s.end().0 - p,
                kind: PageUse::Freelist,
                count: survey.free.listed_count,
                overflow: s.overflow(),
                bucket: None,
            }),
            Some(PageUse::Damaged) => Some(PageRun {
                start: PageId(p),
                pages: 1,
                kind: PageUse::Damaged,
                count: 0,
                overflow: 0,
                bucket: survey.walk.damaged.get(&p).copied(),
            }),
            Some(kind) => Some(same_use_run(&survey, p, high_water.0, kind)),
        };
        match run {
            Some(run) => {
                p += run.pages;
                runs.push(run);
            }
            None => p += 1,
        }
    }
    Ok(PageMap {
        page_size: image.page_size(),
        high_water,
        file_pages: image.file_pages(),
        runs,
        buckets: survey.walk.buckets.clone(),
        problems: survey.walk.into_problems(),
    })
}

/// The run of pages from `start` whose use is `kind` (a meta page is a run of its own).
fn same_use_run(survey: &Survey, start: u64, high_water: u64, kind: PageUse) -> PageRun {
    let mut end = start + 1;
    while kind != PageUse::Meta && end < high_water && survey.use_of(end) == Some(kind) {
        end += 1;
    }
    PageRun {
        start: PageId(start),
        pages: end - start,
        kind,
        count: 0,
        overflow: 0,
        bucket: None,
    }
}

/// One page's header and decoded contents.
#[derive(Debug)]
pub struct PageDetail {
    pub id: PageId,
    pub header: PageHeader,
    pub body: PageBody,
}

#[derive(Debug)]
pub enum PageBody {
    /// The fields as stored, and why they are not a valid meta (if they are not).
    Meta {
        stored: Meta,
        problem: Option<Error>,
    },
    Branch(Vec<BranchItem>),
    Leaf(Vec<LeafItem>),
    Freelist(Vec<PageId>),
    /// The header names a page type, but the page does not decode as one.
    Damaged(Error),
    /// The flags name no page type: an overflow continuation, a page never written, or damage.
    NoType,
}

/// Page `id` as it is in the file, whatever the metas say about it (it may lie past the
/// high-water mark). Fails when it lies past the end of the file or a read fails.
pub fn page_detail(image: &Image, id: PageId) -> Result<PageDetail> {
    let pager = image.pager();
    if id.0 >= image.file_pages() {
        let pages = image.file_pages();
        return Err(Error::corrupted(id, Corruption::PastFileEnd { pages }));
    }
    let mut first = vec![0u8; image.page_size() as usize];
    pager.read_raw(id, &mut first)?;
    let header = PageHeader::decode(&first, id)?;
    let kind = header.kind();
    let body = match kind {
        None => PageBody::NoType,
        Some(PageKind::Meta) => PageBody::Meta {
            stored: Meta::decode_unvalidated(&first, id)?,
            problem: Meta::decode(&first, id).err(),
        },
        Some(kind) => match decode_span(image, id, kind) {
            Ok(body) => body,
            Err(e @ Error::Io { .. }) => return Err(e),
            Err(e) => PageBody::Damaged(e),
        },
    };
    Ok(PageDetail { id, header, body })
}

/// A branch, leaf or freelist page with its overflow pages, decoded.
fn decode_span(image: &Image, id: PageId, kind: PageKind) -> Result<PageBody> {
    let end_of_file = PageId(image.file_pages());
    let buf = image.pager().read_span(id, end_of_file, &[kind])?;
    if kind == PageKind::Freelist {
        let ids = freelist::decode_page(&buf, id, image.meta().high_water)?;
        return Ok(PageBody::Freelist(ids));
    }
    Ok(match Node::decode(&buf, id, id)?.body {
        Body::Branch(items) => PageBody::Branch(items),
        Body::Leaf(items) => PageBody::Leaf(items),
    })
}
