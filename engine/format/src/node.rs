//! Branch and leaf nodes: the decoded form of a page, and the mutable form a write transaction
//! edits before it spills them back to pages.
//!
//! ```text
//! page:    | header 16 | elem 0 | elem 1 | … | elem n-1 | key0 val0 | key1 val1 | … |
//! leaf elem (16 B):    flags u32 | pos u32 | ksize u32 | vsize u32
//! branch elem (16 B):  pos u32 | ksize u32 | pgid u64
//! ```
//! `pos` is relative to the element header's own offset; the value follows the key.
//!
//! Invariants of a decoded node: keys are non-empty and strictly ascending; every element's
//! bytes lie inside the buffer and no two elements' bytes overlap (so decoding copies at most the
//! buffer's size); leaf flags are 0 or [`LEAF_FLAG_BUCKET`]; a bucket value is at least a bucket
//! header long. [`Node::encode`] refuses, with a typed reason and before writing a byte, a node
//! that breaks any of these or does not fit the format's fields (u16 count, u32 offsets and
//! sizes, branch children written first): a node assembled from a damaged tree can fail a
//! commit, never be written as a page no reader could decode.

use crate::corruption::Corruption;
pub use crate::edit::LeafEdit;
use crate::error::{Error, Result};
use crate::page::{
    self, PageHeader, PageKind, ELEMENT_SIZE, FLAG_BRANCH, FLAG_LEAF, LEAF_FLAG_BUCKET,
    PAGE_HEADER_SIZE,
};
use crate::types::{PageId, PageSpan};

/// Size of a bucket header (`root u64`, `sequence u64`) stored as a leaf value.
pub const BUCKET_HEADER_SIZE: usize = 16;

/// bbolt keeps at least this many keys per node when splitting.
const MIN_KEYS_PER_PAGE: usize = 2;

/// A leaf's key and value, held in one allocation, the key first, as a page lays them out: an
/// item is one allocation to make, to free and to miss in the cache, not two (a 100-key write
/// went from 211k to 166k instructions and from 2,989 to 2,390 data-cache misses;
/// `docs/performance.md`, "The seventh round"), and an encode copies it in one piece.
///
/// Invariant: `key_len <= bytes.len()`.
#[derive(Clone, PartialEq, Eq)]
pub struct LeafItem {
    pub flags: u32,
    key_len: u32,
    bytes: Box<[u8]>,
}

impl LeafItem {
    /// An item of `key` and `value`. Panics on a key of 4 GiB or more, which no caller makes:
    /// the engine refuses keys longer than the format's limit, and a decoded key's length is
    /// a u32 field.
    pub fn new(flags: u32, key: &[u8], value: &[u8]) -> LeafItem {
        let key_len = u32::try_from(key.len()).expect("a key shorter than 4 GiB");
        let mut bytes = Vec::with_capacity(key.len() + value.len());
        bytes.extend_from_slice(key);
        bytes.extend_from_slice(value);
        LeafItem {
            flags,
            key_len,
            bytes: bytes.into_boxed_slice(),
        }
    }

    // `get` rather than an index: the invariant makes it always `Some`, and without a panic
    // path the key index's tie search stays inlined (with an index, a Get took 44 more
    // instructions).
    #[inline]
    pub fn key(&self) -> &[u8] {
        self.bytes.get(..self.key_len as usize).unwrap_or_default()
    }

    /// The key's bytes followed by the value's, as a page's element lays them out.
    #[inline]
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    #[inline]
    pub fn value(&self) -> &[u8] {
        self.bytes.get(self.key_len as usize..).unwrap_or_default()
    }

    /// Replace the value, in place when it keeps its length.
    pub fn set_value(&mut self, value: &[u8]) {
        let k = self.key_len as usize;
        if self.bytes.len() - k == value.len() {
            self.bytes[k..].copy_from_slice(value);
        } else {
            *self = LeafItem::new(self.flags, self.key(), value);
        }
    }

    #[inline]
    pub fn is_bucket(&self) -> bool {
        self.flags & LEAF_FLAG_BUCKET != 0
    }
}

impl std::fmt::Debug for LeafItem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LeafItem")
            .field("flags", &self.flags)
            .field("key", &self.key())
            .field("value", &self.value())
            .finish()
    }
}

/// Where a branch element points: a page on disk, or a node this write transaction holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Child {
    Page(PageId),
    Node(Box<Node>),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BranchItem {
    pub key: Vec<u8>,
    pub child: Child,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Body {
    Leaf(Vec<LeafItem>),
    Branch(Vec<BranchItem>),
}

impl Body {
    pub fn first_key(&self) -> Option<&[u8]> {
        match self {
            Body::Leaf(items) => items.first().map(LeafItem::key),
            Body::Branch(items) => items.first().map(|i| i.key.as_slice()),
        }
    }

    pub fn last_key(&self) -> Option<&[u8]> {
        match self {
            Body::Leaf(items) => items.last().map(LeafItem::key),
            Body::Branch(items) => items.last().map(|i| i.key.as_slice()),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Node {
    /// The pages this node was read from; freed when the node is rewritten.
    pub origin: Option<PageSpan>,
    /// The page whose bytes this node was decoded from: its own first page, or the leaf page
    /// that holds an inline bucket. Corruption errors about the node name it; `None` for a node
    /// built in memory.
    pub read_from: Option<PageId>,
    /// Set when a delete or a merge shrank the node: commit considers merging it.
    pub unbalanced: bool,
    /// The one edit made to a leaf's items since it was read or written (`patch.rs`).
    pub edit: LeafEdit,
    /// Whether this node (before `edit`) holds the items of the image this process last wrote
    /// for its page: a commit's own output, handed on through the page cache, not a node
    /// decoded from the page's bytes as read back. Only then may a commit patch that image
    /// instead of encoding the node: the bytes read back can differ from what was written (a
    /// misdirected write, a flipped bit), and a patch of the written image would then not be
    /// this node's encoding (regression 016).
    pub as_written: bool,
    /// Whether every item inserted since the node was split off (or read from its page, or
    /// built) went after every key it then held, and none was removed or merged in: a leaf
    /// grown only at its end, the way ascending keys (counters, sequences) grow the tree's
    /// right edge. A commit that writes the node unsplit hands the flag on with it, so one
    /// insert out of order keeps it off until the node splits.
    pub appended_only: bool,
    pub body: Body,
}

/// An empty leaf built in memory: what `std::mem::take` leaves behind when a node is moved
/// out of an allocation that is kept.
impl Default for Node {
    fn default() -> Node {
        Node::empty_leaf()
    }
}

impl Node {
    /// A node built in memory: read from no page, not edited, not any image's items.
    pub fn built(body: Body) -> Node {
        Node {
            origin: None,
            read_from: None,
            unbalanced: false,
            edit: LeafEdit::None,
            as_written: false,
            appended_only: true,
            body,
        }
    }

    pub fn empty_leaf() -> Node {
        Node::built(Body::Leaf(Vec::new()))
    }

    pub fn is_leaf(&self) -> bool {
        matches!(self.body, Body::Leaf(_))
    }

    pub fn len(&self) -> usize {
        match &self.body {
            Body::Leaf(items) => items.len(),
            Body::Branch(items) => items.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn first_key(&self) -> Option<&[u8]> {
        self.body.first_key()
    }

    /// Serialised size: header plus every element and its bytes.
    pub fn size(&self) -> usize {
        PAGE_HEADER_SIZE
            + match &self.body {
                Body::Leaf(items) => items.iter().map(leaf_item_size).sum::<usize>(),
                Body::Branch(items) => items.iter().map(branch_item_size).sum::<usize>(),
            }
    }

    /// Decode a branch or leaf page image. `expect_id` is the id the header must carry (0 for an
    /// inline bucket's image); `page` names the page in errors.
    pub fn decode(buf: &[u8], expect_id: PageId, page: PageId) -> Result<Node> {
        let header = PageHeader::decode(buf, page)?;
        let corrupt = |reason| Error::corrupted(page, reason);
        if header.id != expect_id {
            return Err(corrupt(Corruption::WrongId { found: header.id }));
        }
        let count = usize::from(header.count);
        if table_end(count) > buf.len() {
            return Err(corrupt(Corruption::ElementsOverrun { count }));
        }
        let body = match header.kind() {
            Some(PageKind::Leaf) => Body::Leaf(decode_leaf(buf, count).map_err(corrupt)?),
            Some(PageKind::Branch) => Body::Branch(decode_branch(buf, count).map_err(corrupt)?),
            _ => {
                let flags = header.flags;
                return Err(corrupt(Corruption::NotANode { flags }));
            }
        };
        Ok(Node {
            read_from: Some(page),
            ..Node::built(body)
        })
    }

    /// Why this node cannot be written as a page that [`Node::decode`] accepts, if it cannot:
    /// checked before a byte of it is written.
    pub fn unencodable(&self) -> Option<Corruption> {
        self.unencodable_with(KeyOrder::Check)
    }

    fn unencodable_with(&self, order: KeyOrder) -> Option<Corruption> {
        let count = self.len();
        if u16::try_from(count).is_err() {
            return Some(Corruption::ElementCountOverflow { count });
        }
        let mut table = TableCheck {
            order,
            data: table_end(count),
            prev: None,
        };
        let checked = match &self.body {
            Body::Leaf(items) => items.iter().enumerate().try_for_each(|(i, it)| {
                leaf_item_refusal(i, it).map_or(Ok(()), Err)?;
                table.element(i, it.key(), it.value().len())
            }),
            Body::Branch(items) => items.iter().enumerate().try_for_each(|(i, it)| {
                branch_item_refusal(i, it).map_or(Ok(()), Err)?;
                table.element(i, &it.key, 0)
            }),
        };
        checked.err()
    }

    /// Encode into `buf` (its length is the size of the page run, or the exact size for an
    /// inline image) with header id `id`. Refuses, writing nothing, a node that
    /// [`Node::unencodable`] rejects. Every byte of `buf[..self.size()]` is written; the rest is
    /// left as it was (a page's unused tail, which the caller has zeroed).
    pub fn encode(&self, buf: &mut [u8], id: PageId, page_size: u32) -> Result<(), Corruption> {
        self.encode_with(buf, id, page_size, KeyOrder::Check)
    }

    /// [`Node::encode`] for a node whose keys the caller has just checked to ascend strictly
    /// (a commit checks them across all the pieces a node splits into, and names a failure
    /// differently) and whose [`Node::size`] it has computed: the same refusals, without
    /// comparing every pair of keys again or walking the items for their size.
    pub fn encode_in_order(
        &self,
        buf: &mut [u8],
        id: PageId,
        page_size: u32,
        size: usize,
    ) -> Result<(), Corruption> {
        debug_assert!(self.keys_ascend(), "the caller checked the order");
        debug_assert_eq!(size, self.size(), "the caller's size is the node's");
        if let Some(reason) = self.unencodable_in_order(size) {
            return Err(reason);
        }
        self.write_image(buf, id, page_size, size)
    }

    /// [`Node::unencodable`] for keys known to ascend strictly, in a node of `size` bytes: the
    /// same answer. Below 4 GiB every offset and length fits its u32, so only what each item
    /// holds is checked, in the full walk's order.
    fn unencodable_in_order(&self, size: usize) -> Option<Corruption> {
        if u32::try_from(size).is_err() {
            return self.unencodable_with(KeyOrder::CheckedByCaller);
        }
        let count = self.len();
        if u16::try_from(count).is_err() {
            return Some(Corruption::ElementCountOverflow { count });
        }
        // Ascending keys: only the first can be empty (checked after what its item holds, as
        // the full walk does).
        let empty_first = |i: usize, key: &[u8]| {
            (i == 0 && key.is_empty()).then_some(Corruption::EmptyKey { element: 0 })
        };
        match &self.body {
            Body::Leaf(items) => items
                .iter()
                .enumerate()
                .find_map(|(i, it)| leaf_item_refusal(i, it).or_else(|| empty_first(i, it.key()))),
            Body::Branch(items) => items
                .iter()
                .enumerate()
                .find_map(|(i, it)| branch_item_refusal(i, it).or_else(|| empty_first(i, &it.key))),
        }
    }

    pub(crate) fn keys_ascend(&self) -> bool {
        match &self.body {
            Body::Leaf(items) => items.windows(2).all(|w| w[0].key() < w[1].key()),
            Body::Branch(items) => items.windows(2).all(|w| w[0].key < w[1].key),
        }
    }

    fn encode_with(
        &self,
        buf: &mut [u8],
        id: PageId,
        page_size: u32,
        order: KeyOrder,
    ) -> Result<(), Corruption> {
        let size = self.size();
        if let Some(reason) = self.unencodable_with(order) {
            return Err(reason);
        }
        self.write_image(buf, id, page_size, size)
    }

    /// Write the image of this node of `size` bytes, checked encodable, into `buf`.
    fn write_image(
        &self,
        buf: &mut [u8],
        id: PageId,
        page_size: u32,
        size: usize,
    ) -> Result<(), Corruption> {
        assert!(
            buf.len() >= size,
            "buffer {} smaller than node {}",
            buf.len(),
            size
        );
        let overflow = u32::try_from(buf.len().div_ceil(page_size as usize) - 1)
            .map_err(|_| Corruption::NodeTooLarge { size })?;
        let (flags, count) = match &self.body {
            Body::Leaf(items) => (FLAG_LEAF, items.len()),
            Body::Branch(items) => (FLAG_BRANCH, items.len()),
        };
        PageHeader {
            id,
            flags,
            // The caller checked that the count, every offset and every size fit.
            count: count as u16,
            overflow,
        }
        .encode(buf);
        // The element table, then each element's bytes in the same order: one 16-byte write
        // per element and one copy per key or value, bounds checked once per slice split.
        let (table, mut data) = buf[PAGE_HEADER_SIZE..size].split_at_mut(count * ELEMENT_SIZE);
        // `pos` counts from the element's own offset.
        let mut pos = table.len();
        let elems = table.chunks_exact_mut(ELEMENT_SIZE);
        match &self.body {
            Body::Leaf(items) => {
                for (elem, it) in elems.zip(items) {
                    let (k, v) = (it.key().len(), it.value().len());
                    elem.copy_from_slice(&leaf_element(it.flags, pos, k, v));
                    // Key and value lie in the item as in the page: one copy.
                    let (bytes, rest) = data.split_at_mut(k + v);
                    bytes.copy_from_slice(it.bytes());
                    data = rest;
                    // Added before an element's size is taken off: `pos` is at least one
                    // element's, a short key and value may be less.
                    pos = pos + k + v - ELEMENT_SIZE;
                }
            }
            Body::Branch(items) => {
                for (elem, it) in elems.zip(items) {
                    let Child::Page(pgid) = it.child else {
                        unreachable!("the caller refused unspilled children");
                    };
                    let k = it.key.len();
                    elem.copy_from_slice(&branch_element(pos, k, pgid));
                    let (key, rest) = data.split_at_mut(k);
                    key.copy_from_slice(&it.key);
                    data = rest;
                    pos = pos + k - ELEMENT_SIZE;
                }
            }
        }
        assert!(data.is_empty(), "encoded size matches size()");
        Ok(())
    }
}

/// A leaf element: flags, the distance from the element to its key, key and value sizes
/// (each checked to fit its u32 by the caller).
pub(crate) fn leaf_element(flags: u32, pos: usize, k: usize, v: usize) -> [u8; ELEMENT_SIZE] {
    let mut e = [0u8; ELEMENT_SIZE];
    e[..4].copy_from_slice(&flags.to_le_bytes());
    e[4..8].copy_from_slice(&(pos as u32).to_le_bytes());
    e[8..12].copy_from_slice(&(k as u32).to_le_bytes());
    e[12..].copy_from_slice(&(v as u32).to_le_bytes());
    e
}

/// A branch element: the distance from the element to its key, the key size, the child.
fn branch_element(pos: usize, k: usize, child: PageId) -> [u8; ELEMENT_SIZE] {
    let mut e = [0u8; ELEMENT_SIZE];
    e[..4].copy_from_slice(&(pos as u32).to_le_bytes());
    e[4..8].copy_from_slice(&(k as u32).to_le_bytes());
    e[8..].copy_from_slice(&child.0.to_le_bytes());
    e
}

/// The element table as [`Node::unencodable`] walks it: where the next element's bytes start,
/// and the key before it.
struct TableCheck<'a> {
    order: KeyOrder,
    data: usize,
    prev: Option<&'a [u8]>,
}

impl<'a> TableCheck<'a> {
    /// Element `i`'s key and value length: in order, and its offset and sizes fit their u32s.
    fn element(&mut self, i: usize, key: &'a [u8], value_len: usize) -> Result<(), Corruption> {
        match self.order {
            KeyOrder::Check => check_key_order(self.prev, key, i)?,
            // Ascending keys: only the first can be empty.
            KeyOrder::CheckedByCaller if i == 0 && key.is_empty() => {
                return Err(Corruption::EmptyKey { element: 0 })
            }
            KeyOrder::CheckedByCaller => {}
        }
        self.prev = Some(key);
        // The element's offset is relative to its own header and, like both sizes, a u32.
        let elem = table_end(i);
        let fits = u32::try_from(self.data - elem).is_ok()
            && u32::try_from(key.len()).is_ok()
            && u32::try_from(value_len).is_ok();
        if !fits {
            return Err(Corruption::ElementTooLarge { element: i });
        }
        self.data += key.len() + value_len;
        Ok(())
    }
}

/// Whether [`Node::encode_with`] compares every pair of keys, or the caller did.
#[derive(Clone, Copy)]
enum KeyOrder {
    Check,
    CheckedByCaller,
}

/// Why leaf item `i` cannot be written, for what it holds alone (its key's place in the table
/// is checked apart): flags the format does not know, or a bucket value too short for its header.
fn leaf_item_refusal(i: usize, it: &LeafItem) -> Option<Corruption> {
    if it.flags & !LEAF_FLAG_BUCKET != 0 {
        let flags = it.flags;
        return Some(Corruption::LeafFlags { element: i, flags });
    }
    (it.is_bucket() && it.value().len() < BUCKET_HEADER_SIZE)
        .then_some(Corruption::BucketValueTooShort { element: i })
}

/// Why branch item `i` cannot be written, for what it holds alone: a child not spilled to a page.
fn branch_item_refusal(i: usize, it: &BranchItem) -> Option<Corruption> {
    (!matches!(it.child, Child::Page(_))).then_some(Corruption::ChildNotSpilled { element: i })
}

pub fn leaf_item_size(it: &LeafItem) -> usize {
    ELEMENT_SIZE + it.bytes().len()
}

pub fn branch_item_size(it: &BranchItem) -> usize {
    ELEMENT_SIZE + it.key.len()
}

/// End of the element table of a node with `count` elements.
pub(crate) fn table_end(count: usize) -> usize {
    PAGE_HEADER_SIZE + count * ELEMENT_SIZE
}

/// Bytes a node's image needs, from its header and element table alone: the end of the table
/// or of the furthest element's bytes, whichever is later. `buf` holds at least the table
/// (`16 + 16 × count` bytes); `limit` is the length of the run the header claims, and an element
/// reaching past it is an error. Lets a reader size its buffer by what the elements use rather
/// than by the overflow count, before reading the rest of a run.
pub fn image_extent(
    buf: &[u8],
    kind: PageKind,
    count: usize,
    limit: u64,
) -> Result<u64, Corruption> {
    let table = table_end(count);
    assert!(
        buf.len() >= table,
        "the caller reads the element table first"
    );
    let mut extent = table as u64;
    for i in 0..count {
        let elem = table_end(i);
        let (pos, ksize, vsize) = match kind {
            PageKind::Leaf => (
                page::read_u32(buf, elem + 4),
                page::read_u32(buf, elem + 8),
                page::read_u32(buf, elem + 12),
            ),
            _ => (page::read_u32(buf, elem), page::read_u32(buf, elem + 4), 0),
        };
        let end = elem as u64 + u64::from(pos) + u64::from(ksize) + u64::from(vsize);
        if end > limit {
            return Err(Corruption::ElementOverrun { offset: elem });
        }
        extent = extent.max(end);
    }
    Ok(extent)
}

/// Bytes of element `elem`'s key (and `vsize` bytes after it), bounds-checked.
fn element_bytes(
    buf: &[u8],
    elem: usize,
    pos: u32,
    ksize: u32,
    vsize: u32,
) -> Result<(&[u8], &[u8]), Corruption> {
    let start = (elem as u64).checked_add(u64::from(pos));
    let kend = start.and_then(|s| s.checked_add(u64::from(ksize)));
    let vend = kend.and_then(|k| k.checked_add(u64::from(vsize)));
    match (start, kend, vend) {
        (Some(s), Some(k), Some(v)) if v <= buf.len() as u64 => {
            Ok((&buf[s as usize..k as usize], &buf[k as usize..v as usize]))
        }
        _ => Err(Corruption::ElementOverrun { offset: elem }),
    }
}

fn check_key_order(prev: Option<&[u8]>, key: &[u8], i: usize) -> Result<(), Corruption> {
    if key.is_empty() {
        return Err(Corruption::EmptyKey { element: i });
    }
    if prev.is_some_and(|p| p >= key) {
        return Err(Corruption::KeysOutOfOrder { element: i });
    }
    Ok(())
}

/// Count the bytes elements copy out of `buf`; more than the buffer means they overlap.
fn claim(claimed: &mut u64, bytes: usize, available: usize) -> Result<(), Corruption> {
    *claimed += bytes as u64;
    let available = available as u64;
    if *claimed > available {
        return Err(Corruption::ElementsOverlap {
            claimed: *claimed,
            available,
        });
    }
    Ok(())
}

fn decode_leaf(buf: &[u8], count: usize) -> Result<Vec<LeafItem>, Corruption> {
    let mut items: Vec<LeafItem> = Vec::with_capacity(count);
    let mut claimed = table_end(count) as u64;
    for i in 0..count {
        let elem = table_end(i);
        let flags = page::read_u32(buf, elem);
        let pos = page::read_u32(buf, elem + 4);
        let ksize = page::read_u32(buf, elem + 8);
        let vsize = page::read_u32(buf, elem + 12);
        if flags & !LEAF_FLAG_BUCKET != 0 {
            return Err(Corruption::LeafFlags { element: i, flags });
        }
        let (key, value) = element_bytes(buf, elem, pos, ksize, vsize)?;
        check_key_order(items.last().map(LeafItem::key), key, i)?;
        if flags & LEAF_FLAG_BUCKET != 0 && value.len() < BUCKET_HEADER_SIZE {
            return Err(Corruption::BucketValueTooShort { element: i });
        }
        claim(&mut claimed, key.len() + value.len(), buf.len())?;
        items.push(LeafItem::new(flags, key, value));
    }
    Ok(items)
}

fn decode_branch(buf: &[u8], count: usize) -> Result<Vec<BranchItem>, Corruption> {
    let mut items: Vec<BranchItem> = Vec::with_capacity(count);
    let mut claimed = table_end(count) as u64;
    for i in 0..count {
        let elem = table_end(i);
        let pos = page::read_u32(buf, elem);
        let ksize = page::read_u32(buf, elem + 4);
        let pgid = PageId(page::read_u64(buf, elem + 8));
        let (key, _) = element_bytes(buf, elem, pos, ksize, 0)?;
        check_key_order(items.last().map(|p| p.key.as_slice()), key, i)?;
        claim(&mut claimed, key.len(), buf.len())?;
        items.push(BranchItem {
            key: key.to_vec(),
            child: Child::Page(pgid),
        });
    }
    Ok(items)
}

/// Split points for a node of items with the given sizes (bbolt's rule): keep splitting while
/// the remainder does not fit in a page and has more than 2×MIN_KEYS_PER_PAGE items; each piece
/// takes items until adding the next would pass `page_size × fill_percent`, keeping at least
/// MIN_KEYS_PER_PAGE items on both sides. Returns the start index of every piece after the first.
pub fn split_points(sizes: &[usize], page_size: usize, fill_percent: f64) -> Vec<usize> {
    let threshold = (page_size as f64 * fill_percent) as usize;
    let mut cuts = Vec::new();
    let mut start = 0;
    loop {
        let rest = &sizes[start..];
        let rest_size = PAGE_HEADER_SIZE + rest.iter().sum::<usize>();
        if rest.len() <= MIN_KEYS_PER_PAGE * 2 || rest_size < page_size {
            return cuts;
        }
        let mut size = PAGE_HEADER_SIZE;
        let mut index = 0;
        for (i, &el) in rest.iter().enumerate().take(rest.len() - MIN_KEYS_PER_PAGE) {
            index = i;
            if i >= MIN_KEYS_PER_PAGE && size + el > threshold {
                break;
            }
            size += el;
        }
        // `index` ≥ MIN_KEYS_PER_PAGE here because the loop runs past it before it may break.
        debug_assert!(index >= MIN_KEYS_PER_PAGE);
        start += index;
        cuts.push(start);
    }
}

#[cfg(test)]
#[path = "node_tests.rs"]
mod tests;
