//! The engine's own [`Db::check`] on an inspected file.
//!
//! The file is opened read-only, which loads no freelist: a damaged freelist page, or (without a
//! persisted freelist) a tree the rebuild could not walk, does not fail the open, and `check`
//! lists that damage with everything else (see `check.rs` for where its free set comes from).

use super::Image;
use crate::check::Problem;
use crate::db::Db;
use crate::error::Result;
use crate::options::Options;
use crate::pageset::PageSet;

/// Every problem [`Db::check`] finds in the snapshot of the meta in use (none: consistent).
pub fn check(image: &Image) -> Result<Vec<Problem>> {
    open(image)?.check()
}

/// [`check`] of what a reader reaches without entering a page of `avoid` (nor a node whose run
/// touches one). Pages it leaves out are not reported unreachable, so the problems it finds lie
/// clear of `avoid`: what damage there cannot explain.
pub fn check_avoiding(image: &Image, avoid: &PageSet) -> Result<Vec<Problem>> {
    open(image)?.check_avoiding(Some(avoid))
}

fn open(image: &Image) -> Result<Db> {
    let options = Options {
        read_only: true,
        ..Options::default()
    };
    Db::open(image.storage(), options)
}
