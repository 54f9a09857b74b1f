//! Which pages are free and which are pending, as far as a file can tell.
//!
//! A persisted freelist page lists free and pending ids alike (after a crash no reader is left,
//! so both are reusable). A file keeps no txid per id, so "pending" here means what the last
//! commit freed: listed ids that the previous meta's snapshot still uses (its tree or its
//! freelist page). A reader of that snapshot could still be reading them; once the file is
//! reopened, they are free. Without a persisted freelist, free is every page below the
//! high-water mark that no bucket reaches, as open's rebuild computes it.

use super::walk::{unreached, walk};
use super::Image;
use crate::error::{Error, Result};
use crate::freelist;
use crate::meta::Meta;
use crate::page::PageKind;
use crate::pageset::PageSet;
use crate::problem::{reason_at, Report};
use crate::types::{PageId, PageSpan};

pub(crate) struct FreeState {
    /// Whether the meta in use points at a freelist page.
    pub persisted: bool,
    /// The freelist page and its overflow pages, when they could be read.
    pub span: Option<PageSpan>,
    /// Free or pending: listed on the freelist page, or (not persisted) reached by no bucket.
    pub listed: PageSet,
    /// The listed pages the previous meta's snapshot still uses.
    pub pending: PageSet,
}

impl FreeState {
    /// Read the free set of the meta in use; damage to the freelist page goes to `report`.
    pub fn read(image: &Image, reached: &PageSet, report: &mut Report) -> Result<FreeState> {
        let meta = image.meta();
        let hwm = meta.high_water;
        let (span, listed) = if meta.has_freelist() {
            let (span, ids) = read_freelist(image, &meta, report)?;
            (span, PageSet::from_ids(ids))
        } else {
            (None, unreached(reached, hwm))
        };
        let mut state = FreeState {
            persisted: meta.has_freelist(),
            span,
            listed,
            pending: PageSet::new(),
        };
        if let Some(previous) = image.previous_meta() {
            state.mark_pending(image, &previous)?;
        }
        Ok(state)
    }

    pub fn listed_count(&self) -> u64 {
        self.listed.len()
    }

    /// Mark the listed pages that `previous`'s snapshot reaches.
    fn mark_pending(&mut self, image: &Image, previous: &Meta) -> Result<()> {
        if previous.high_water > image.meta().high_water {
            // Not a previous commit of this file (high-water marks never shrink), and its pages
            // past the file's are not the file's to describe.
            return Ok(());
        }
        let old = walk(image.reader(), previous, &mut ())?;
        let mut used = old.reached;
        if previous.has_freelist() {
            if let (Some(s), _) = read_freelist(image, previous, &mut Report::default())? {
                used.insert(s.start, s.end());
            }
        }
        self.pending = self.listed.intersection(&used);
        Ok(())
    }
}

/// The span of `meta`'s freelist page, when it reads, and its ids, when they decode. Damage goes
/// to `report`; only an I/O error is returned.
fn read_freelist(
    image: &Image,
    meta: &Meta,
    report: &mut Report,
) -> Result<(Option<PageSpan>, Vec<PageId>)> {
    let pager = image.reader();
    let page = meta.freelist;
    let buf = match pager.read_span(page, meta.high_water, &[PageKind::Freelist]) {
        Ok(buf) => buf,
        Err(e @ Error::Io { .. }) => return Err(e),
        Err(e) => {
            report.add(Some(page), reason_at(page, &e));
            return Ok((None, Vec::new()));
        }
    };
    let span = PageSpan::new(page, (buf.len() / pager.page_size() as usize) as u64);
    let ids = freelist::decode_page(&buf, page, meta.high_water).unwrap_or_else(|e| {
        report.add(Some(page), reason_at(page, &e));
        Vec::new()
    });
    Ok((Some(span), ids))
}
