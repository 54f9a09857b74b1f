//! The page map, one entry per page or run of pages (what `bbolt pages` lists), and one page's
//! decoded contents (what `bbolt page` shows).

pub use super::survey::PageUse;
use super::survey::Survey;
use super::walk::{Buckets, PageVisit, Visitor};
use super::Image;
use crate::corruption::Corruption;
use crate::error::{Error, Result};
use crate::freelist;
use crate::meta::Meta;
use crate::node::{Body, BranchItem, LeafItem, Node};
use crate::page::{PageHeader, PageKind};
use crate::problem::Problem;
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
    let mut runs: Vec<PageRun> = Vec::new();
    // The first page no run covers yet: a node or the freelist may reach past its segment.
    let mut p = 0;
    for (segment, kind) in survey.segments(high_water) {
        let end = segment.end().0;
        if end <= p {
            continue;
        }
        let start = segment.start.0.max(p);
        match kind {
            None => {
                // Pages the walk entered: the nodes that start here. A page that starts none
                // is an overflow page of a node that overlaps another: `check` names it.
                for (_, run) in nodes.0.range(start..end) {
                    if run.start.0 >= p {
                        p = run.start.0 + run.pages;
                        runs.push(run.clone());
                    }
                }
                p = p.max(end);
            }
            Some(PageUse::Freelist) => {
                let s = survey
                    .free
                    .span
                    .expect("a freelist segment lies in the freelist span");
                runs.push(PageRun {
                    start: PageId(start),
                    pages: s.end().0 - start,
                    kind: PageUse::Freelist,
                    count: survey.free.listed_count(),
                    overflow: s.overflow(),
                    bucket: None,
                });
                p = s.end().0;
            }
            Some(PageUse::Damaged) => {
                for page in start..end {
                    runs.push(PageRun {
                        start: PageId(page),
                        pages: 1,
                        kind: PageUse::Damaged,
                        count: 0,
                        overflow: 0,
                        bucket: survey.walk.damaged.get(&page).copied(),
                    });
                }
                p = end;
            }
            Some(kind) => {
                push_use_run(&mut runs, start, end, kind);
                p = end;
            }
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

/// Add pages `start..end` of use `kind`, joining the run before when it is of the same use and
/// ends at `start` (a meta page is a run of its own).
fn push_use_run(runs: &mut Vec<PageRun>, start: u64, end: u64, kind: PageUse) {
    if kind == PageUse::Meta {
        for page in start..end {
            runs.push(use_run(page, 1, kind));
        }
        return;
    }
    match runs.last_mut() {
        Some(last) if last.kind == kind && last.start.0 + last.pages == start => {
            last.pages += end - start;
        }
        _ => runs.push(use_run(start, end - start, kind)),
    }
}

fn use_run(start: u64, pages: u64, kind: PageUse) -> PageRun {
    PageRun {
        start: PageId(start),
        pages,
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
    let pager = image.reader();
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
    let buf = image.reader().read_span(id, end_of_file, &[kind])?;
    if kind == PageKind::Freelist {
        let ids = freelist::decode_page(&buf, id, image.meta().high_water)?;
        return Ok(PageBody::Freelist(ids));
    }
    Ok(match Node::decode(&buf, id, id)?.body {
        Body::Branch(items) => PageBody::Branch(items),
        Body::Leaf(items) => PageBody::Leaf(items),
    })
}
