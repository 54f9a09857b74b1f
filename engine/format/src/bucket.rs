//! The bucket header: the value of a leaf element flagged [`LEAF_FLAG_BUCKET`].
//!
//! ```text
//! offset  size  field
//!      0     8  root      the bucket's root page, or 0 for an inline bucket
//!      8     8  sequence  the bucket's sequence
//!     16     …  an inline bucket's leaf page image (root = 0 only), its header id 0
//! ```
//!
//! A small bucket with no sub-buckets is stored inline. The root bucket's header lives in the
//! meta (`root`, `sequence`).
//!
//! [`LEAF_FLAG_BUCKET`]: crate::kind::LEAF_FLAG_BUCKET

use crate::corruption::Corruption;
use crate::error::{Error, Result};
use crate::node::{Node, BUCKET_HEADER_SIZE};
use crate::page;
use crate::types::PageId;
use std::sync::Arc;

/// A decoded bucket header plus, for an inline bucket, its root leaf.
pub enum BucketRoot {
    Page(PageId),
    Inline(Arc<Node>),
}

pub struct Header {
    pub root: BucketRoot,
    pub sequence: u64,
    /// The page the header was read from (a leaf, or the meta for the root bucket): a root
    /// reference outside the file is damage there.
    pub from: PageId,
}

/// Decode a bucket value found in leaf page `page`.
pub fn decode_header(value: &[u8], page: PageId) -> Result<Header> {
    if value.len() < BUCKET_HEADER_SIZE {
        return Err(Error::corrupted(page, Corruption::BucketHeaderTooShort));
    }
    let root = PageId(page::read_u64(value, 0));
    let sequence = page::read_u64(value, 8);
    let root = if root.0 == 0 {
        let node = Node::decode(&value[BUCKET_HEADER_SIZE..], PageId(0), page)?;
        if !node.is_leaf() {
            return Err(Error::corrupted(page, Corruption::InlineNotLeaf));
        }
        BucketRoot::Inline(Arc::new(node))
    } else {
        BucketRoot::Page(root)
    };
    Ok(Header {
        root,
        sequence,
        from: page,
    })
}

/// A bucket value: its header, and for an inline bucket the leaf image after it. An inline leaf
/// that [`Node::decode`] would reject is refused (nothing is built) with the reason.
pub fn encode_header(
    root: PageId,
    sequence: u64,
    inline: Option<&Node>,
) -> Result<Vec<u8>, Corruption> {
    let extra = inline.map_or(0, Node::size);
    let mut v = vec![0u8; BUCKET_HEADER_SIZE + extra];
    page::write_u64(&mut v, 0, root.0);
    page::write_u64(&mut v, 8, sequence);
    if let Some(n) = inline {
        n.encode(&mut v[BUCKET_HEADER_SIZE..], PageId(0), u32::MAX)?;
    }
    Ok(v)
}
