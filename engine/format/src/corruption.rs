//! Why bytes read from disk do not form a valid structure: the reason of
//! [`Error::Corrupted`](crate::Error::Corrupted).
//!
//! The error's `page` is the page whose bytes were being read when the damage showed; a reason
//! that involves another page — a reference that points outside the file, a child whose keys
//! disagree with the separators above it — names that page in a field of its own, so a bad
//! pointer is never mistaken for a page number. Code that must decide on a reason matches on the
//! variant; the `Display` text is for people and stays stable, because the simulator hashes it
//! into trace hashes.

use crate::kind::PageKind;
use crate::limits::{MAX_BUCKET_DEPTH, MAX_TREE_DEPTH};
use crate::types::PageId;

/// Which bound of a parent's range a child's keys break.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RangeEdge {
    /// A key below the separator that leads to the child.
    Below,
    /// A key at or above the next separator.
    AtOrAbove,
}

/// Why a page could not be freed: it is a meta page, or already free or pending. Only a tree
/// that references a page twice makes a commit free one again.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FreeRefusal {
    MetaPage(PageId),
    AlreadyFree(PageId),
    AlreadyPending(PageId),
}

impl FreeRefusal {
    pub fn page(self) -> PageId {
        match self {
            FreeRefusal::MetaPage(p)
            | FreeRefusal::AlreadyFree(p)
            | FreeRefusal::AlreadyPending(p) => p,
        }
    }
}

impl std::fmt::Display for FreeRefusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FreeRefusal::MetaPage(p) => write!(f, "cannot free meta page {p}"),
            FreeRefusal::AlreadyFree(p) => write!(f, "page {p} already freed (it is free)"),
            FreeRefusal::AlreadyPending(p) => write!(f, "page {p} already freed (it is pending)"),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Corruption {
    // --- Page headers and reading page runs.
    #[error("page shorter than its header")]
    ShortHeader,
    #[error("header names page {found}")]
    WrongId { found: PageId },
    #[error("invalid page flags {flags:#06x}")]
    InvalidFlags { flags: u16 },
    #[error("expected a {} page, found {}", kind_names(expected), found.name())]
    WrongKind {
        expected: Vec<PageKind>,
        found: PageKind,
    },
    /// A reference (branch child, bucket root) to a page outside `[low, high)`.
    #[error("page reference {child} outside [{low}, {high})")]
    ChildOutOfRange {
        child: PageId,
        low: PageId,
        high: PageId,
    },
    #[error("overflow {overflow} runs past the high-water mark {high_water}")]
    OverflowPastHighWater { overflow: u32, high_water: PageId },
    #[error("overflow pages run past the end of the file")]
    OverflowPastEof,
    /// The header claims more overflow pages than its own contents occupy. bbolt (and this
    /// engine) size every node run exactly; a larger claim would make freeing and checking the
    /// run cost memory in proportion to a number, not to bytes the file holds.
    #[error("overflow {overflow} claims more pages than the {allowed} its contents need")]
    OverflowBeyondContents { overflow: u32, allowed: u64 },
    #[error("page offset overflows")]
    OffsetOverflows,
    #[error("page lies past the end of the file")]
    PastEof,
    /// A page asked for by id (not reached by a reference) lies past the end of the file.
    #[error("past the end of the file ({pages} pages)")]
    PastFileEnd { pages: u64 },

    // --- Branch and leaf elements.
    #[error("expected a branch or leaf page, flags {flags:#06x}")]
    NotANode { flags: u16 },
    #[error("{count} elements overrun the page")]
    ElementsOverrun { count: usize },
    #[error("element at offset {offset} overruns the page")]
    ElementOverrun { offset: usize },
    /// Elements that claim more key and value bytes than the page holds, so they overlap:
    /// decoding would copy the same bytes many times, and memory would follow the element count
    /// rather than the page's size.
    #[error("elements claim {claimed} bytes, more than the {available} the page holds")]
    ElementsOverlap { claimed: u64, available: u64 },
    #[error("element {element} has an empty key")]
    EmptyKey { element: usize },
    #[error("keys out of order at element {element}")]
    KeysOutOfOrder { element: usize },
    #[error("element {element} has flags {flags:#x}")]
    LeafFlags { element: usize, flags: u32 },
    #[error("bucket value at element {element} too short")]
    BucketValueTooShort { element: usize },

    // --- Trees and buckets.
    #[error("branch page with no elements")]
    EmptyBranch,
    #[error("tree deeper than {MAX_TREE_DEPTH} levels")]
    TreeTooDeep,
    #[error("buckets nested deeper than {MAX_BUCKET_DEPTH}")]
    BucketsTooDeep,
    #[error("bucket value shorter than its header")]
    BucketHeaderTooShort,
    #[error("inline bucket is not a leaf")]
    InlineNotLeaf,
    /// Two children of one branch are not both leaves or both branches.
    #[error("sibling pages of different types: {left} and {right}")]
    SiblingKindsDiffer { left: PageId, right: PageId },
    /// A child read for a write holds keys outside the range its parent's separators give it.
    #[error("{}", child_outside(*child, *edge))]
    ChildOutsideSeparators { child: PageId, edge: RangeEdge },
    /// A node assembled by commit would not be in key order across pages.
    #[error("keys out of order across pages: a separator disagrees with its child")]
    CrossPageOrder,
    #[error("keys out of order across leaves (a page reached by two paths?)")]
    CursorOrder,
    #[error("tree too deep for a cursor")]
    CursorTooDeep,
    /// A second reference to a page already reached.
    #[error("page {target} reachable twice")]
    ReachedTwice { target: PageId },
    #[error("freed twice ({refusal}): the tree references it more than once")]
    FreedTwice { refusal: FreeRefusal },
    #[error("high-water mark overflows the page id space")]
    HighWaterOverflow,
    /// A page the tree uses (a commit read its node and rewrites it) that the freelist listed
    /// as free, so the same commit had already allocated it for another node.
    #[error("the freelist lists this page as free, yet the tree uses it")]
    LiveListedFree,
    /// A node commit would write references a page that is free, or that this commit frees:
    /// the tree references that page from two places.
    #[error("page reference {child} is to a free page (the tree references it twice)")]
    ReferenceToFreePage { child: PageId },
    /// A commit would allocate page `allocated` at the high-water mark, yet a reference on this
    /// page (or this node's run) already reaches it: what that reference reads would change.
    #[error(
        "a reference past the high-water mark reaches page {allocated}, which a commit would \
         allocate"
    )]
    AllocatesReferencedPage { allocated: PageId },
    /// The first commit of a session checks the file to step around damage no commit can
    /// see (FORMAT.md §10); this file's tree has more problems than the check reports.
    #[error("too damaged for a commit to step around what it cannot see (check stopped)")]
    TooDamagedToGuard,

    // --- Nodes commit would write (a node decoding would reject is never written).
    #[error("{count} elements overflow the u16 element count")]
    ElementCountOverflow { count: usize },
    #[error("element {element} does not fit the u32 offsets and sizes of a page")]
    ElementTooLarge { element: usize },
    #[error("node of {size} bytes needs more overflow pages than a u32 counts")]
    NodeTooLarge { size: usize },
    #[error("branch element {element} points at a node not yet written")]
    ChildNotSpilled { element: usize },

    // --- Freelist pages.
    #[error(
        "expected freelist flags {:#06x}, found {flags:#06x}",
        crate::kind::FLAG_FREELIST
    )]
    FreelistFlags { flags: u16 },
    #[error("freelist count escape without a count")]
    FreelistEscapeWithoutCount,
    #[error("freelist count {count} exceeds the {capacity} ids the page holds")]
    FreelistCountExceedsPage { count: u64, capacity: u64 },
    #[error("freelist lists meta page {id}")]
    FreelistMetaPage { id: PageId },
    #[error("freelist lists page {id} at or past the high-water mark {high_water}")]
    FreelistPastHighWater { id: PageId, high_water: PageId },
    #[error("freelist lists page {id} twice")]
    FreelistDuplicate { id: PageId },

    // --- Meta pages.
    #[error("meta page shorter than 80 bytes")]
    MetaTooShort,
    #[error("invalid magic")]
    InvalidMagic,
    #[error("unsupported version {version}")]
    UnsupportedVersion { version: u32 },
    #[error("invalid page size {size}")]
    InvalidPageSize { size: u32 },
    #[error("root {root} outside [2, {high_water})")]
    RootOutOfRange { root: PageId, high_water: PageId },
    #[error("freelist {freelist} outside [2, {high_water})")]
    FreelistOutOfRange {
        freelist: PageId,
        high_water: PageId,
    },
    #[error("meta page past end of file")]
    MetaPastEof,
    #[error("no meta page found at any page size")]
    NoMetaFound,
    #[error("page size {found} differs from the file's {file}")]
    PageSizeDiffers { found: u32, file: u32 },
}

fn kind_names(kinds: &[PageKind]) -> String {
    let names: Vec<&str> = kinds.iter().map(|k| k.name()).collect();
    names.join(" or ")
}

fn child_outside(child: PageId, edge: RangeEdge) -> String {
    let which = match edge {
        RangeEdge::Below => "a key below its separator",
        RangeEdge::AtOrAbove => "a key not below the next separator",
    };
    format!("child page {child} holds {which} (a separator disagrees with its child)")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn texts_name_the_reference_apart_from_the_page() {
        let c = Corruption::ChildOutOfRange {
            child: PageId(4461319140530639695),
            low: PageId(2),
            high: PageId(315),
        };
        assert_eq!(
            c.to_string(),
            "page reference 4461319140530639695 outside [2, 315)"
        );
        let c = Corruption::WrongKind {
            expected: vec![PageKind::Branch, PageKind::Leaf],
            found: PageKind::Meta,
        };
        assert_eq!(c.to_string(), "expected a branch or leaf page, found meta");
        let c = Corruption::ChildOutsideSeparators {
            child: PageId(3),
            edge: RangeEdge::Below,
        };
        assert_eq!(
            c.to_string(),
            "child page 3 holds a key below its separator (a separator disagrees with its child)"
        );
        let c = Corruption::FreelistFlags { flags: 2 };
        assert_eq!(
            c.to_string(),
            "expected freelist flags 0x0010, found 0x0002"
        );
    }
}
