//! Mutations of the file as a whole: bits and words, metas (checksum recomputed), length,
//! whole pages, the freelist page, sparse huge claims.

use super::tree::{read_le, zero_page};
use super::{page_value, u16_value, write_u16, write_u64, Target};
use crate::edit::{Edit, MutationKind, Op};
use crate::image::FileImage;
use crate::layout::Layout;
use crate::rng::FuzzRng;
use crashlab_format::meta::{Meta, META_SIZE};
use crashlab_format::page::{PAGE_HEADER_SIZE, PAGE_SIZE_MAX, PAGE_SIZE_MIN};
use crashlab_format::types::{PageId, TxId};

/// A byte offset to damage: inside a node page half the time, else anywhere in use.
fn offset(t: &Target<'_>, rng: &mut FuzzRng) -> u64 {
    if let Some(l) = t.layout {
        let pages = l.node_pages();
        if !pages.is_empty() && rng.ratio(1, 2) {
            return l.offset(*rng.pick(&pages)) + rng.below(u64::from(l.page_size));
        }
    }
    rng.below(t.used_len())
}

pub(super) fn bit_flips(t: &Target<'_>, rng: &mut FuzzRng) -> Edit {
    let most = if rng.ratio(1, 4) { 16 } else { 3 };
    let flips = 1 + rng.below(most);
    let ops = (0..flips)
        .map(|_| {
            let at = offset(t, rng);
            let old = read_le(t, at, 1) as u8;
            Op::write(at, &[old ^ 1 << rng.below(8)])
        })
        .collect();
    Edit::new(MutationKind::BitFlip, format!("{flips} bit flips"), ops)
}

pub(super) fn byte_write(t: &Target<'_>, rng: &mut FuzzRng) -> Edit {
    let at = offset(t, rng);
    let width = *rng.pick(&[1usize, 2, 4, 8]);
    let at = at & !(width as u64 - 1);
    let v: u64 = match rng.below(8) {
        0 => 0,
        1 => 1,
        2 => 2,
        3 => 0xFFFF,
        4 => u64::from(u32::MAX),
        5 => u64::MAX,
        6 => rng.below(64),
        _ => rng.next_u64(),
    };
    Edit::write(
        MutationKind::ByteWrite,
        format!("{width}-byte word {v:#x} at byte {at}"),
        at,
        &v.to_le_bytes()[..width],
    )
}

/// The 64 meta bytes of `m` with its checksum: the format's layout written here rather than by
/// `Meta::encode`, so that no sanity check the engine may keep there stands between a mutation
/// and the field value it wants (a txid of 2^64 - 1, a page size of 0).
pub(super) fn meta_bytes(m: &Meta) -> [u8; META_SIZE] {
    use crashlab_format::meta::{fnv1a64, MAGIC, VERSION};
    use crashlab_format::page::{write_u32 as put32, write_u64 as put64};
    let mut b = [0u8; META_SIZE];
    put32(&mut b, 0, MAGIC);
    put32(&mut b, 4, VERSION);
    put32(&mut b, 8, m.page_size);
    put32(&mut b, 12, m.flags);
    put64(&mut b, 16, m.root.0);
    put64(&mut b, 24, m.sequence);
    put64(&mut b, 32, m.freelist.0);
    put64(&mut b, 40, m.high_water.0);
    put64(&mut b, 48, m.txid.0);
    let sum = fnv1a64(&b[..56]);
    put64(&mut b, 56, sum);
    b
}

/// The meta of `slot` as stored now (fields unvalidated), when its bytes are in the file.
fn stored_meta(image: &FileImage, l: &Layout, slot: u64) -> Option<Meta> {
    let mut buf = [0u8; PAGE_HEADER_SIZE + META_SIZE];
    image.read_at(l.offset(slot), &mut buf).ok()?;
    Meta::decode_unvalidated(&buf, PageId(slot)).ok()
}

/// Rewrite one field of one or both metas and recompute the checksum, so open accepts the
/// meta and the damage reaches whatever the field steers.
pub(super) fn meta_field(l: &Layout, image: &FileImage, rng: &mut FuzzRng) -> Edit {
    let in_use = l.in_use as u64;
    let slots: Vec<u64> = match rng.below(4) {
        0 | 1 => vec![in_use],
        2 => vec![1 - in_use],
        _ => vec![0, 1],
    };
    let field = rng.below(8);
    // Now and then a torn meta instead: the field changes, the checksum does not.
    let torn = rng.ratio(1, 6);
    let written = if torn { META_SIZE - 8 } else { META_SIZE };
    let mut ops = Vec::new();
    let mut notes = Vec::new();
    for &slot in &slots {
        let Some(mut m) = stored_meta(image, l, slot) else {
            continue;
        };
        let other = stored_meta(image, l, 1 - slot);
        let note = set_meta_field(&mut m, other, field, l, rng);
        notes.push(format!("meta {slot} {note}"));
        let at = l.offset(slot) + PAGE_HEADER_SIZE as u64;
        ops.push(Op::write(at, &meta_bytes(&m)[..written]));
    }
    let checksum = if torn {
        "old checksum kept"
    } else {
        "checksum recomputed"
    };
    Edit::new(
        MutationKind::MetaField,
        format!("{} ({checksum})", notes.join(", ")),
        ops,
    )
}

fn set_meta_field(
    m: &mut Meta,
    other: Option<Meta>,
    field: u64,
    l: &Layout,
    rng: &mut FuzzRng,
) -> String {
    let hwm = m.high_water.0;
    match field {
        0 => {
            m.root = PageId(page_value(l, rng));
            format!("root → {}", m.root)
        }
        1 => {
            m.freelist = if rng.ratio(1, 3) {
                PageId::NO_FREELIST
            } else {
                PageId(page_value(l, rng))
            };
            format!("freelist → {:#x}", m.freelist.0)
        }
        2 => {
            let file_pages = l.file_len / u64::from(m.page_size.max(1));
            m.high_water = PageId(match rng.below(10) {
                0 => hwm.saturating_sub(1),
                1 => hwm / 2,
                2 => 3,
                3 => hwm.saturating_add(1),
                4 => hwm.saturating_add(rng.range(2, 200)),
                5 => file_pages,
                6 => file_pages + 1,
                7 => 1 << rng.range(20, 31),
                8 => u64::MAX / u64::from(m.page_size.max(1)),
                _ => u64::MAX,
            });
            format!("high-water mark → {}", m.high_water)
        }
        3 => {
            let newest = other.map_or(m.txid.0, |o| o.txid.0.max(m.txid.0));
            m.txid = TxId(match rng.below(8) {
                0 | 1 => u64::MAX - 1,
                2 | 3 => u64::MAX,
                4 => 0,
                5 => other.map_or(0, |o| o.txid.0),
                6 => newest.wrapping_add(1),
                _ => rng.next_u64(),
            });
            format!("txid → {}", m.txid)
        }
        4 => {
            let sizes: Vec<u32> = (9..=16).map(|s| 1u32 << s).collect();
            m.page_size = match rng.below(4) {
                0 => PAGE_SIZE_MIN / 2,
                1 => PAGE_SIZE_MAX * 2,
                2 => rng.next_u64() as u32,
                _ => *rng.pick(&sizes),
            };
            format!("page size → {}", m.page_size)
        }
        5 => {
            let random = rng.next_u64();
            m.sequence = *rng.pick(&[u64::MAX, 0, random]);
            format!("root sequence → {}", m.sequence)
        }
        6 => {
            m.flags = rng.next_u64() as u32;
            format!("flags → {:#x}", m.flags)
        }
        _ => {
            // Make this slot the newest: open then uses it, whatever it holds.
            let newest = other.map_or(m.txid.0, |o| o.txid.0.max(m.txid.0));
            m.txid = TxId(newest.saturating_add(1));
            format!("txid → {} (now the newest)", m.txid)
        }
    }
}

pub(super) fn truncate(t: &Target<'_>, rng: &mut FuzzRng) -> Edit {
    let len = t.image.len();
    let ps = t.page_size();
    let used = t.used_len();
    let to = match rng.below(8) {
        0 => rng.below(len.max(1)),
        1 => ps * rng.below((used / ps).max(1)),
        2 => used.saturating_sub(1),
        3 => used.saturating_sub(ps),
        4 => ps,
        5 => 80 - rng.below(2),
        6 => 0,
        _ => len.saturating_sub(1),
    };
    Edit::new(
        MutationKind::Truncate,
        format!("truncate to {to} bytes"),
        vec![Op::SetLen { len: to }],
    )
}

/// A page to overwrite: a node page mostly, sometimes any page below the high-water mark.
fn some_page(l: &Layout, rng: &mut FuzzRng) -> u64 {
    let pages = l.node_pages();
    if pages.is_empty() || rng.ratio(1, 4) {
        rng.range(0, l.high_water.max(1) - 1)
    } else {
        *rng.pick(&pages)
    }
}

pub(super) fn page_zero(l: &Layout, rng: &mut FuzzRng) -> Edit {
    let page = some_page(l, rng);
    Edit::new(
        MutationKind::PageZero,
        format!("zero page {page}"),
        vec![zero_page(l, page)],
    )
}

/// Copy one page over another; `fix_id` then writes the destination's id into the copy's
/// header, so it passes the id check and reaches the key and pointer checks.
pub(super) fn page_copy(l: &Layout, rng: &mut FuzzRng, fix_id: bool) -> Edit {
    let (from, to) = (some_page(l, rng), some_page(l, rng));
    let mut ops = vec![Op::Copy {
        from: l.offset(from),
        to: l.offset(to),
        len: u64::from(l.page_size),
    }];
    let kind = if fix_id {
        ops.push(write_u64(l.offset(to), to));
        MutationKind::PageDuplicate
    } else {
        MutationKind::PageMisdirect
    };
    Edit::new(kind, format!("copy page {from} over page {to}"), ops)
}

pub(super) fn freelist(l: &Layout, image: &FileImage, rng: &mut FuzzRng) -> Edit {
    let (page, pages) = l.freelist.expect("a freelist page");
    let at = l.offset(page);
    let t = Target {
        layout: Some(l),
        image,
    };
    let count = read_le(&t, at + 10, 2);
    let room = (pages * u64::from(l.page_size) - PAGE_HEADER_SIZE as u64) / 8;
    let id_at = |i: u64| at + PAGE_HEADER_SIZE as u64 + 8 * i;
    let live = l.node_pages();
    let (note, ops) = match rng.below(6) {
        0 => {
            let escaped = *rng.pick(&[u64::MAX, 1 << 40, count, count + 1, room, room + 1]);
            let ops = vec![write_u16(at + 10, 0xFFFF), write_u64(id_at(0), escaped)];
            (format!("count escape 0xFFFF, count {escaped}"), ops)
        }
        1 => {
            let v = u16_value(rng, count as u16);
            (format!("count {count} → {v}"), vec![write_u16(at + 10, v)])
        }
        2 if count > 0 => {
            let i = rng.below(count);
            let id = *rng.pick(&[0, 1, l.high_water, l.high_water + 1, u64::MAX, page]);
            (format!("id {i} → {id}"), vec![write_u64(id_at(i), id)])
        }
        3 if count > 1 => {
            let i = rng.range(1, count - 1);
            let prev = read_le(&t, id_at(i - 1), 8);
            (
                format!("id {i} → {prev} (a duplicate)"),
                vec![write_u64(id_at(i), prev)],
            )
        }
        4 if !live.is_empty() && count < room && count < 0xFFFE => {
            // A page in use listed as free: a commit that trusts it overwrites live data.
            let id = *rng.pick(&live);
            let ops = vec![
                write_u16(at + 10, count as u16 + 1),
                write_u64(id_at(count), id),
            ];
            (format!("live page {id} appended as free"), ops)
        }
        _ if count > 0 && !live.is_empty() => {
            let i = rng.below(count);
            let id = *rng.pick(&live);
            (
                format!("id {i} → live page {id}"),
                vec![write_u64(id_at(i), id)],
            )
        }
        _ => {
            let v = u16_value(rng, count as u16);
            (format!("count {count} → {v}"), vec![write_u16(at + 10, v)])
        }
    };
    Edit::new(
        MutationKind::Freelist,
        format!("freelist page {page}: {note}"),
        ops,
    )
}

/// Claim a huge sparse length: alone, or with metas that claim its pages as the high-water mark
/// (with or without a persisted freelist), checksums recomputed.
pub(super) fn sparse_huge(t: &Target<'_>, rng: &mut FuzzRng) -> Edit {
    let ps = t.page_size();
    let len = match rng.below(4) {
        0 => 1 << 30,
        1 => 1 << 36,
        2 => 1 << 40,
        // Past whatever length the file has now (an earlier mutation may have set one).
        _ => rng.range(
            t.image.len().max(ps),
            (1 << 40u64).max(t.image.len().max(ps)),
        ),
    } / ps
        * ps;
    let mut ops = vec![Op::SetLen { len }];
    let claim = match (t.layout, rng.below(3)) {
        (Some(l), 1 | 2) => Some((l, rng.ratio(1, 2))),
        _ => None,
    };
    let Some((l, drop_freelist)) = claim else {
        return Edit::new(MutationKind::SparseHuge, format!("length → {len}"), ops);
    };
    let hwm = match rng.below(3) {
        0 => len / ps,
        1 => (len / ps).min(1 << 28),
        _ => (len / ps).min(l.high_water * 4 + 64),
    };
    for slot in [0, 1] {
        let Some(mut m) = stored_meta(t.image, l, slot) else {
            continue;
        };
        m.high_water = PageId(hwm.max(m.high_water.0));
        if drop_freelist {
            m.freelist = PageId::NO_FREELIST;
        }
        ops.push(Op::write(
            l.offset(slot) + PAGE_HEADER_SIZE as u64,
            &meta_bytes(&m),
        ));
    }
    let freelist = if drop_freelist {
        ", no persisted freelist"
    } else {
        ""
    };
    Edit::new(
        MutationKind::SparseHuge,
        format!("length → {len}, both metas claim high-water mark {hwm}{freelist} (checksums recomputed)"),
        ops,
    )
}

pub(super) fn extend(t: &Target<'_>, rng: &mut FuzzRng) -> Edit {
    let ps = t.page_size();
    let len = t.image.len();
    let pages = 1 + rng.below(4);
    let mut ops = vec![Op::SetLen {
        len: len + pages * ps,
    }];
    let garbage = rng.bytes(64);
    for p in 0..pages {
        ops.push(Op::write(len + p * ps, &garbage));
    }
    Edit::new(
        MutationKind::Extend,
        format!("append {pages} pages of garbage"),
        ops,
    )
}
