//! Seeded mutations of a base file. Each draws one [`MutationKind`], aims it with the base's
//! [`Layout`] (a field of a page header, an element, a bucket header, a meta with its checksum
//! recomputed, ...) and records what it did as an [`Edit`] of byte operations. Several are
//! stacked per input; each is applied at once, so the next one sees the damage so far (a meta
//! edit re-encodes the meta as it now is).
//!
//! The layout is the base's, parsed before any damage: later mutations may aim at offsets an
//! earlier one made stale, which is damage too.

mod file;
mod tree;

use crate::edit::{Edit, MutationKind, Op};
use crate::image::FileImage;
use crate::layout::Layout;
use crate::rng::FuzzRng;

/// How often each kind is drawn (among the kinds that apply to the file).
const WEIGHTS: [(MutationKind, u64); 16] = [
    (MutationKind::BitFlip, 10),
    (MutationKind::ByteWrite, 8),
    (MutationKind::PageHeader, 10),
    (MutationKind::BranchElement, 6),
    (MutationKind::ChildPointer, 8),
    (MutationKind::LeafElement, 8),
    (MutationKind::InlineImage, 6),
    (MutationKind::BucketHeader, 6),
    (MutationKind::MetaField, 12),
    (MutationKind::Truncate, 3),
    (MutationKind::PageZero, 3),
    (MutationKind::PageMisdirect, 3),
    (MutationKind::PageDuplicate, 4),
    (MutationKind::Freelist, 6),
    (MutationKind::SparseHuge, 3),
    (MutationKind::Extend, 2),
];

/// What a mutator sees: the base's layout (when it parsed) and the file as damaged so far.
pub struct Target<'a> {
    pub layout: Option<&'a Layout>,
    pub image: &'a FileImage,
}

impl Target<'_> {
    /// Bytes worth damaging: the pages below the high-water mark that the file holds.
    fn used_len(&self) -> u64 {
        let dense = self.image.dense().len() as u64;
        match self.layout {
            Some(l) => dense.min(l.offset(l.high_water)).max(1),
            None => dense.max(1),
        }
    }

    fn page_size(&self) -> u64 {
        self.layout.map_or(4096, |l| u64::from(l.page_size))
    }

    fn applies(&self, kind: MutationKind) -> bool {
        let Some(l) = self.layout else {
            return matches!(
                kind,
                MutationKind::BitFlip
                    | MutationKind::ByteWrite
                    | MutationKind::Truncate
                    | MutationKind::SparseHuge
                    | MutationKind::Extend
            );
        };
        let has = |f: &dyn Fn(&crate::layout::NodeImage) -> bool| l.nodes.iter().any(f);
        match kind {
            MutationKind::BranchElement | MutationKind::ChildPointer => {
                has(&|n| n.branch && !n.elements.is_empty())
            }
            MutationKind::LeafElement => {
                has(&|n| !n.branch && n.page.is_some() && !n.elements.is_empty())
            }
            MutationKind::InlineImage => has(&|n| n.page.is_none()),
            MutationKind::BucketHeader => !l.buckets.is_empty(),
            MutationKind::PageHeader | MutationKind::PageZero => !l.nodes.is_empty(),
            MutationKind::Freelist => l.freelist.is_some(),
            _ => true,
        }
    }
}

/// Apply `count` mutations to `image`, returning what they did.
pub fn mutate(
    layout: Option<&Layout>,
    image: &mut FileImage,
    rng: &mut FuzzRng,
    count: usize,
) -> Vec<Edit> {
    let mut edits = Vec::with_capacity(count);
    for _ in 0..count {
        let target = Target {
            layout,
            image: &*image,
        };
        let weights: Vec<u64> = WEIGHTS
            .iter()
            .map(|&(k, w)| if target.applies(k) { w } else { 0 })
            .collect();
        let kind = WEIGHTS[rng.weighted(&weights)].0;
        let edit = one(kind, &target, rng);
        crate::edit::apply_all(image, std::slice::from_ref(&edit));
        edits.push(edit);
    }
    edits
}

fn one(kind: MutationKind, t: &Target<'_>, rng: &mut FuzzRng) -> Edit {
    let l = || t.layout.expect("structured kinds apply only with a layout");
    match kind {
        MutationKind::BitFlip => file::bit_flips(t, rng),
        MutationKind::ByteWrite => file::byte_write(t, rng),
        MutationKind::PageHeader => tree::page_header(t, rng),
        MutationKind::BranchElement => tree::branch_element(t, rng),
        MutationKind::ChildPointer => tree::child_pointer(t, rng),
        MutationKind::LeafElement => tree::leaf_element(t, rng),
        MutationKind::InlineImage => tree::inline_image(t, rng),
        MutationKind::BucketHeader => tree::bucket_header(t, rng),
        MutationKind::MetaField => file::meta_field(l(), t.image, rng),
        MutationKind::Truncate => file::truncate(t, rng),
        MutationKind::PageZero => file::page_zero(l(), rng),
        MutationKind::PageMisdirect => file::page_copy(l(), rng, false),
        MutationKind::PageDuplicate => file::page_copy(l(), rng, true),
        MutationKind::Freelist => file::freelist(l(), t.image, rng),
        MutationKind::SparseHuge => file::sparse_huge(t, rng),
        MutationKind::Extend => file::extend(t, rng),
    }
}

/// A u32 field's new value: a boundary, a neighbour of the old value, or random.
fn u32_value(rng: &mut FuzzRng, old: u32) -> u32 {
    match rng.below(10) {
        0 => 0,
        1 => old.wrapping_add(1),
        2 => old.wrapping_sub(1),
        3 => old.wrapping_add(16),
        4 => old.wrapping_mul(2),
        5 => 0x7FFF_FFFF,
        6 => u32::MAX,
        7 => 0xFFFF,
        8 => rng.below(4096) as u32,
        _ => rng.next_u64() as u32,
    }
}

/// A u16 field's new value.
fn u16_value(rng: &mut FuzzRng, old: u16) -> u16 {
    match rng.below(8) {
        0 => 0,
        1 => old.wrapping_add(1),
        2 => old.wrapping_sub(1),
        3 => old.wrapping_mul(2),
        4 => 0xFFFE,
        5 => 0xFFFF,
        6 => rng.below(64) as u16,
        _ => rng.next_u64() as u16,
    }
}

/// A page id that is interesting to point at: a meta, the freelist, a node, the edges of the
/// high-water mark and the file, or far out of range.
fn page_value(l: &Layout, rng: &mut FuzzRng) -> u64 {
    let hwm = l.high_water;
    let pages = l.node_pages();
    match rng.below(14) {
        0 => rng.below(2),
        1 => l.freelist.map_or(2, |f| f.0),
        2 | 3 if !pages.is_empty() => *rng.pick(&pages),
        4 => hwm.saturating_sub(1),
        5 => hwm,
        6 => hwm + 1,
        7 => l.file_len / u64::from(l.page_size),
        8 => u64::from(u32::MAX),
        9 => 1 << 40,
        10 => u64::MAX - rng.below(2),
        11 => rng.next_u64(),
        _ => rng.range(2, hwm.max(3) - 1),
    }
}

fn write_u16(at: u64, v: u16) -> Op {
    Op::write(at, &v.to_le_bytes())
}

fn write_u32(at: u64, v: u32) -> Op {
    Op::write(at, &v.to_le_bytes())
}

fn write_u64(at: u64, v: u64) -> Op {
    Op::write(at, &v.to_le_bytes())
}

#[cfg(test)]
mod tests;
