//! Mutations of the trees: page headers, branch and leaf elements, child pointers, bucket
//! headers and inline bucket images.

use super::{page_value, u16_value, u32_value, write_u16, write_u32, write_u64, Target};
use crate::edit::{Edit, MutationKind, Op};
use crate::layout::{Layout, NodeImage};
use crate::rng::FuzzRng;
use crashlab_format::page::{FLAG_BRANCH, FLAG_FREELIST, FLAG_LEAF, FLAG_META};

/// Little-endian u64 (or shorter) at `at` of the damaged file; 0 past the end.
pub(super) fn read_le(t: &Target<'_>, at: u64, width: usize) -> u64 {
    let mut b = [0u8; 8];
    match t.image.read_at(at, &mut b[..width]) {
        Ok(()) => u64::from_le_bytes(b),
        Err(_) => 0,
    }
}

fn pick_node<'l>(
    l: &'l Layout,
    rng: &mut FuzzRng,
    keep: impl Fn(&NodeImage) -> bool,
) -> &'l NodeImage {
    let nodes: Vec<&NodeImage> = l.nodes.iter().filter(|n| keep(n)).collect();
    nodes[rng.index(nodes.len())]
}

fn name(n: &NodeImage) -> String {
    match n.page {
        Some(p) => format!("page {p}"),
        None => format!("inline image at byte {} (in page {})", n.offset, n.host),
    }
}

pub(super) fn page_header(t: &Target<'_>, rng: &mut FuzzRng) -> Edit {
    let l = t.layout.expect("layout");
    let n = pick_node(l, rng, |n| n.page.is_some());
    header_edit(t, n, rng, MutationKind::PageHeader)
}

/// An edit of one field of `n`'s page header.
fn header_edit(t: &Target<'_>, n: &NodeImage, rng: &mut FuzzRng, kind: MutationKind) -> Edit {
    let l = t.layout.expect("layout");
    let at = n.offset;
    let page = n.page.unwrap_or(0);
    let (field, op) = match rng.below(4) {
        0 => {
            let id = match rng.below(4) {
                0 => page_value(l, rng),
                1 => page.wrapping_add(1),
                2 => 0,
                _ => u64::MAX,
            };
            ("id", write_u64(at, id))
        }
        1 => {
            let random = rng.next_u64() as u16;
            let flags = *rng.pick(&[
                FLAG_BRANCH,
                FLAG_LEAF,
                FLAG_META,
                FLAG_FREELIST,
                0,
                FLAG_BRANCH | FLAG_LEAF,
                FLAG_LEAF | FLAG_FREELIST,
                random,
            ]);
            ("flags", write_u16(at + 8, flags))
        }
        2 => {
            let old = read_le(t, at + 10, 2) as u16;
            ("count", write_u16(at + 10, u16_value(rng, old)))
        }
        _ => {
            let old = read_le(t, at + 12, 4) as u32;
            let to_hwm = l.high_water.saturating_sub(page) as u32;
            let v = match rng.below(3) {
                0 => to_hwm.saturating_sub(rng.below(2) as u32),
                _ => u32_value(rng, old),
            };
            ("overflow", write_u32(at + 12, v))
        }
    };
    Edit::new(kind, format!("{} header {field}", name(n)), vec![op])
}

pub(super) fn branch_element(t: &Target<'_>, rng: &mut FuzzRng) -> Edit {
    let l = t.layout.expect("layout");
    let n = pick_node(l, rng, |n| n.branch && !n.elements.is_empty());
    let i = rng.index(n.elements.len());
    let at = n.elements[i].offset;
    let (field, op) = match rng.below(3) {
        0 => (
            "pos",
            write_u32(at, u32_value(rng, read_le(t, at, 4) as u32)),
        ),
        1 => {
            let v = u32_value(rng, read_le(t, at + 4, 4) as u32);
            ("ksize", write_u32(at + 4, v))
        }
        _ => return key_byte(t, n, i, rng, MutationKind::BranchElement),
    };
    Edit::new(
        MutationKind::BranchElement,
        format!("{} element {i} {field}", name(n)),
        vec![op],
    )
}

/// Change one byte of element `i`'s key: a separator that disagrees with its child, or a leaf
/// key out of order.
fn key_byte(
    t: &Target<'_>,
    n: &NodeImage,
    i: usize,
    rng: &mut FuzzRng,
    kind: MutationKind,
) -> Edit {
    let at = n.elements[i].offset;
    let (pos, ksize) = if n.branch {
        (read_le(t, at, 4), read_le(t, at + 4, 4))
    } else {
        (read_le(t, at + 4, 4), read_le(t, at + 8, 4))
    };
    let key = at + pos + rng.below(ksize.max(1));
    let old = read_le(t, key, 1) as u8;
    let new = match rng.below(3) {
        0 => old.wrapping_add(1),
        1 => old.wrapping_sub(1),
        _ => old ^ (1 << rng.below(8)),
    };
    Edit::write(
        kind,
        format!("{} element {i} key byte", name(n)),
        key,
        &[new],
    )
}

pub(super) fn child_pointer(t: &Target<'_>, rng: &mut FuzzRng) -> Edit {
    let l = t.layout.expect("layout");
    let n = pick_node(l, rng, |n| n.branch && !n.elements.is_empty());
    let i = rng.index(n.elements.len());
    let page = n.page.expect("branches are pages");
    let ancestors = l.ancestors(page);
    let shared: Vec<u64> = l
        .nodes
        .iter()
        .filter(|o| o.page != n.page)
        .flat_map(|o| o.elements.iter().filter_map(|e| e.child))
        .collect();
    let siblings: Vec<u64> = n.elements.iter().filter_map(|e| e.child).collect();
    let (what, child) = match rng.below(7) {
        0 if !ancestors.is_empty() => ("an ancestor (a cycle)", *rng.pick(&ancestors)),
        1 => ("itself (a cycle)", page),
        2 if !shared.is_empty() => ("another parent's child (shared)", *rng.pick(&shared)),
        3 => ("a sibling's child (shared)", *rng.pick(&siblings)),
        4 => ("a meta page", rng.below(2)),
        5 if l.freelist.is_some() => ("the freelist page", l.freelist.map_or(2, |f| f.0)),
        _ => ("an interesting page", page_value(l, rng)),
    };
    let at = n.elements[i].offset + 8;
    Edit::new(
        MutationKind::ChildPointer,
        format!("page {page} element {i} child → {child}: {what}"),
        vec![write_u64(at, child)],
    )
}

pub(super) fn leaf_element(t: &Target<'_>, rng: &mut FuzzRng) -> Edit {
    let l = t.layout.expect("layout");
    let n = pick_node(l, rng, |n| {
        !n.branch && n.page.is_some() && !n.elements.is_empty()
    });
    leaf_element_edit(t, n, rng, MutationKind::LeafElement)
}

fn leaf_element_edit(t: &Target<'_>, n: &NodeImage, rng: &mut FuzzRng, kind: MutationKind) -> Edit {
    let i = rng.index(n.elements.len());
    let at = n.elements[i].offset;
    let (field, op) = match rng.below(5) {
        0 => {
            let random = rng.next_u64() as u32;
            let flags = *rng.pick(&[0u32, 1, 2, 3, 0x10, random]);
            ("flags", write_u32(at, flags))
        }
        1 => (
            "pos",
            write_u32(at + 4, u32_value(rng, read_le(t, at + 4, 4) as u32)),
        ),
        2 => (
            "ksize",
            write_u32(at + 8, u32_value(rng, read_le(t, at + 8, 4) as u32)),
        ),
        3 => (
            "vsize",
            write_u32(at + 12, u32_value(rng, read_le(t, at + 12, 4) as u32)),
        ),
        _ => return key_byte(t, n, i, rng, kind),
    };
    Edit::new(kind, format!("{} element {i} {field}", name(n)), vec![op])
}

pub(super) fn inline_image(t: &Target<'_>, rng: &mut FuzzRng) -> Edit {
    let l = t.layout.expect("layout");
    let n = pick_node(l, rng, |n| n.page.is_none());
    if n.elements.is_empty() || rng.ratio(1, 3) {
        return header_edit(t, n, rng, MutationKind::InlineImage);
    }
    leaf_element_edit(t, n, rng, MutationKind::InlineImage)
}

pub(super) fn bucket_header(t: &Target<'_>, rng: &mut FuzzRng) -> Edit {
    let l = t.layout.expect("layout");
    let b = rng.index(l.buckets.len());
    let bucket = &l.buckets[b];
    let owner = l
        .nodes
        .iter()
        .find(|n| n.elements.iter().any(|e| e.bucket == Some(b)))
        .map_or(0, |n| n.host);
    if rng.ratio(1, 5) {
        let random = rng.next_u64();
        let seq = *rng.pick(&[0, u64::MAX, u64::MAX - 1, random]);
        return Edit::new(
            MutationKind::BucketHeader,
            format!("bucket header at byte {} sequence → {seq}", bucket.offset),
            vec![write_u64(bucket.offset + 8, seq)],
        );
    }
    let mut ancestors = l.ancestors(owner);
    ancestors.push(owner);
    let other_roots: Vec<u64> = l
        .buckets
        .iter()
        .map(|o| o.root)
        .filter(|&r| r != 0 && r != bucket.root)
        .collect();
    let (what, root) = match rng.below(5) {
        0 => ("0 (claims inline)", 0),
        1 => (
            "an ancestor or its own leaf (a cycle)",
            *rng.pick(&ancestors),
        ),
        2 if !other_roots.is_empty() => ("another bucket's root (shared)", *rng.pick(&other_roots)),
        _ => ("an interesting page", page_value(l, rng)),
    };
    Edit::new(
        MutationKind::BucketHeader,
        format!(
            "bucket header at byte {} (root {}) root → {root}: {what}",
            bucket.offset, bucket.root
        ),
        vec![write_u64(bucket.offset, root)],
    )
}

/// Ops that zero a whole page.
pub(super) fn zero_page(l: &Layout, page: u64) -> Op {
    Op::Fill {
        at: l.offset(page),
        len: u64::from(l.page_size),
        byte: 0,
    }
}
