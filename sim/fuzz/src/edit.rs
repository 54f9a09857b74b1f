//! Concrete edits: what a mutation did, as byte operations anyone can re-apply. A saved input
//! stores these (not the random draws that chose them), so it replays unchanged even after the
//! mutators change, and a person can read what was damaged.

use crate::image::FileImage;
use crashlab_format::inspect;
use serde::{Deserialize, Serialize};

/// The kinds of mutation, for counting what a campaign exercised.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, clap::ValueEnum,
)]
#[serde(rename_all = "kebab-case")]
pub enum MutationKind {
    /// Flip a few random bits anywhere in the used pages.
    BitFlip,
    /// Write a random or boundary byte or word at a random (aligned) offset.
    ByteWrite,
    /// A branch, leaf or freelist page header's id, flags, count or overflow.
    PageHeader,
    /// A branch element's pos or ksize.
    BranchElement,
    /// A branch element's child: out of range, a meta or freelist page, an ancestor (a cycle),
    /// itself, or another parent's child (a shared child).
    ChildPointer,
    /// A leaf element's flags, pos, ksize or vsize.
    LeafElement,
    /// A header, element or key inside an inline bucket's page image.
    InlineImage,
    /// A sub-bucket header's root (inline 0, another bucket's root, an ancestor, ...) or
    /// sequence.
    BucketHeader,
    /// A meta field (root, freelist, high-water mark, txid, page size, sequence, flags) with
    /// the checksum recomputed, so the meta is accepted.
    MetaField,
    /// Cut the file short.
    Truncate,
    /// Zero a page.
    PageZero,
    /// Copy a page over another unchanged (a misdirected write: its header names the source).
    PageMisdirect,
    /// Copy a page over another and fix its header id (a duplicated node that passes the id
    /// check).
    PageDuplicate,
    /// The freelist page: count escape, ids out of range, duplicates, live pages listed free.
    Freelist,
    /// Claim a huge sparse length, optionally with metas that claim the pages too.
    SparseHuge,
    /// Append pages of garbage past the end.
    Extend,
}

impl MutationKind {
    pub const ALL: [MutationKind; 16] = [
        MutationKind::BitFlip,
        MutationKind::ByteWrite,
        MutationKind::PageHeader,
        MutationKind::BranchElement,
        MutationKind::ChildPointer,
        MutationKind::LeafElement,
        MutationKind::InlineImage,
        MutationKind::BucketHeader,
        MutationKind::MetaField,
        MutationKind::Truncate,
        MutationKind::PageZero,
        MutationKind::PageMisdirect,
        MutationKind::PageDuplicate,
        MutationKind::Freelist,
        MutationKind::SparseHuge,
        MutationKind::Extend,
    ];

    pub fn name(self) -> String {
        serde_json::to_value(self)
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned))
            .expect("a unit variant serialises as its name")
    }
}

/// One byte-level operation.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "kebab-case")]
pub enum Op {
    /// Write `hex` (lower-case hex bytes) at byte `at`.
    Write { at: u64, hex: String },
    /// Write `len` copies of `byte` at `at`.
    Fill { at: u64, len: u64, byte: u8 },
    /// Copy `len` bytes from `from` to `to` (read first, then written).
    Copy { from: u64, to: u64, len: u64 },
    /// Set the file length: shorter truncates, longer claims zeros (sparse).
    SetLen { len: u64 },
}

/// One mutation: its kind, what it meant, and its operations.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Edit {
    pub kind: MutationKind,
    pub note: String,
    pub ops: Vec<Op>,
}

impl Edit {
    pub fn new(kind: MutationKind, note: impl Into<String>, ops: Vec<Op>) -> Edit {
        Edit {
            kind,
            note: note.into(),
            ops,
        }
    }

    pub fn write(kind: MutationKind, note: impl Into<String>, at: u64, bytes: &[u8]) -> Edit {
        Edit::new(kind, note, vec![Op::write(at, bytes)])
    }
}

impl Op {
    pub fn write(at: u64, bytes: &[u8]) -> Op {
        Op::Write {
            at,
            hex: inspect::hex(bytes),
        }
    }

    /// Apply to `image`. An operation that reaches past the end is clipped to it (the file
    /// never grows by a write), so any edit list applies to any file.
    pub fn apply(&self, image: &mut FileImage) {
        let len = image.len();
        if self.span(len) == 0 {
            return;
        }
        match self {
            Op::Write { at, hex } => {
                let bytes = unhex(hex);
                let n = clip(*at, bytes.len() as u64, len);
                image
                    .write_at(*at, &bytes[..n as usize])
                    .expect("a write inside the file");
            }
            Op::Fill { at, len: n, byte } => {
                let n = clip(*at, *n, len).min(1 << 20);
                image
                    .write_at(*at, &vec![*byte; n as usize])
                    .expect("a fill inside the file");
            }
            Op::Copy { from, to, len: n } => {
                let n = clip(*from, *n, len).min(clip(*to, *n, len)).min(1 << 20);
                let mut buf = vec![0u8; n as usize];
                image
                    .read_at(*from, &mut buf)
                    .expect("a copy inside the file");
                image.write_at(*to, &buf).expect("a copy inside the file");
            }
            Op::SetLen { len } => image
                .set_len(*len.min(&crate::image::LEN_MAX))
                .expect("a length below LEN_MAX"),
        }
    }
}

impl Op {
    /// Bytes this op touches in a file of `len` bytes (a length change always counts).
    fn span(&self, len: u64) -> u64 {
        match self {
            Op::Write { at, hex } => clip(*at, hex.len() as u64 / 2, len),
            Op::Fill { at, len: n, .. } => clip(*at, *n, len),
            Op::Copy { from, to, len: n } => clip(*from, *n, len).min(clip(*to, *n, len)),
            Op::SetLen { .. } => 1,
        }
    }
}

/// How many of `n` bytes at `at` lie below `len`.
fn clip(at: u64, n: u64, len: u64) -> u64 {
    len.saturating_sub(at).min(n)
}

/// `Err` naming `what` unless `hex` is bytes in hex: a saved input is checked with it when it
/// is loaded, so that [`unhex`] never meets anything else.
pub fn check_hex(what: &str, hex: &str) -> Result<(), String> {
    match inspect::unhex(hex) {
        Some(_) => Ok(()),
        None => Err(format!(
            "{what}: not bytes in hex (an even number of hex digits)"
        )),
    }
}

/// The bytes of hex that [`inspect::hex`] wrote or a loaded saved input held ([`check_hex`]).
pub fn unhex(hex: &str) -> Vec<u8> {
    inspect::unhex(hex).expect("hex written by inspect::hex or checked when loaded")
}

pub fn apply_all(image: &mut FileImage, edits: &[Edit]) {
    for e in edits {
        for op in &e.ops {
            op.apply(image);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ops_apply_and_clip_at_the_end() {
        let mut f = FileImage::from_bytes(vec![0; 16]);
        Op::write(14, &[1, 2, 3, 4]).apply(&mut f);
        Op::Fill {
            at: 0,
            len: 2,
            byte: 9,
        }
        .apply(&mut f);
        Op::Copy {
            from: 14,
            to: 4,
            len: 8,
        }
        .apply(&mut f);
        assert_eq!(f.len(), 16);
        assert_eq!(
            f.to_vec(64).unwrap(),
            [9, 9, 0, 0, 1, 2, 0, 0, 0, 0, 0, 0, 0, 0, 1, 2]
        );
        Op::SetLen { len: 1 << 40 }.apply(&mut f);
        assert_eq!(f.len(), 1 << 40);
        assert_eq!(f.real_bytes(), 16);
    }

    #[test]
    fn edits_round_trip_through_json() {
        let e = Edit::write(MutationKind::MetaField, "txid", 64, &[0xff; 8]);
        let text = serde_json::to_string(&e).unwrap();
        assert!(text.contains("\"meta-field\""), "{text}");
        assert_eq!(serde_json::from_str::<Edit>(&text).unwrap(), e);
        assert_eq!(MutationKind::SparseHuge.name(), "sparse-huge");
    }
}
