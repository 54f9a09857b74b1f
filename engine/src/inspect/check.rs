//! The engine's own [`Db::check`] on an inspected file.
//!
//! The file is opened read-only. A damaged freelist page, or (without a persisted freelist) a
//! tree the rebuild cannot walk, would fail a normal open; here the free set is then taken from
//! the tolerant walk instead, so `check` runs and lists that damage with everything else.

use super::walk::{unreached, walk};
use super::Image;
use crate::check::Problem;
use crate::db::Db;
use crate::error::Result;
use crate::meta::Meta;
use crate::pager::Pager;
use crate::pageset::PageSet;

/// Every problem [`Db::check`] finds in the snapshot of the meta in use (none: consistent).
pub fn check(image: &Image) -> Result<Vec<Problem>> {
    let free_pages = |pager: &Pager, meta: &Meta| -> Result<PageSet> {
        let w = walk(pager, meta, &mut ())?;
        Ok(unreached(&w.reached, meta.high_water))
    };
    let db = Db::open_for_check(image.storage(), &free_pages)?;
    db.check()
}
