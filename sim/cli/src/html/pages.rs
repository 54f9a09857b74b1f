//! Which page each pending sector belongs to, and what that page is (meta, freelist, branch,
//! leaf, overflow), decoded by the engine's own inspector on the image the engine saw just
//! before the cut. Only crashlab's format is decoded; another engine's pages are named by id.

use crashlab_engine::MemStorage;
use crashlab_format::inspect::{page_detail, Image, PageBody};
use crashlab_format::types::PageId;
use std::collections::BTreeMap;

/// How far back an overflow page's first page is looked for.
const OVERFLOW_LOOKBACK_MAX: u64 = 256;

/// The decoded pages of one image, by id, and its page size.
pub struct PageTypes {
    pub page_size: u64,
    kinds: BTreeMap<u64, &'static str>,
}

impl PageTypes {
    /// The type of each page of `image` holding one of `sectors` (of `sector_size` bytes);
    /// `None` when the image does not open as crashlab's format.
    pub fn decode(image: &[u8], sectors: &[u64], sector_size: u64) -> Option<PageTypes> {
        let img = Image::open(MemStorage::from_bytes(image.to_vec())).ok()?;
        let page_size = u64::from(img.page_size());
        let mut kinds = BTreeMap::new();
        for &s in sectors {
            let page = s * sector_size / page_size;
            kinds.entry(page).or_insert_with(|| kind_of(&img, page));
        }
        Some(PageTypes { page_size, kinds })
    }

    /// The page holding sector `s` and its type.
    pub fn page_of(&self, s: u64, sector_size: u64) -> (u64, &'static str) {
        let page = s * sector_size / self.page_size;
        (page, self.kinds.get(&page).copied().unwrap_or("?"))
    }
}

/// What page `id` is, by its header; a page without a type is an overflow page when a typed
/// page before it spans it.
fn kind_of(img: &Image, id: u64) -> &'static str {
    match page_detail(img, PageId(id)).map(|d| d.body) {
        Ok(PageBody::Meta { .. }) => "meta",
        Ok(PageBody::Branch(_)) => "branch",
        Ok(PageBody::Leaf(_)) => "leaf",
        Ok(PageBody::Freelist(_)) => "freelist",
        Ok(PageBody::Damaged(_)) => "damaged",
        Ok(PageBody::NoType) if spanned(img, id) => "overflow",
        Ok(PageBody::NoType) => "untyped",
        Err(_) => "unreadable",
    }
}

fn spanned(img: &Image, id: u64) -> bool {
    (id.saturating_sub(OVERFLOW_LOOKBACK_MAX)..id)
        .rev()
        .any(|q| {
            page_detail(img, PageId(q)).is_ok_and(|d| {
                !matches!(d.body, PageBody::NoType) && q + u64::from(d.header.overflow) >= id
            })
        })
}
