//! Crash images and their identity.
//!
//! A crash image is the durable image of a crash point with some of its pending sectors written
//! over it. Its identity is 128 bits: the XOR of one hash per sector and one of the length, each
//! xxh3's 128-bit hash (the `xxhash-rust` crate) of the sector's bytes, seeded with the sector's
//! index (the length with an index no sector has). XOR lets the identity of "durable image + these
//! sectors" be computed from per-sector deltas without building the image, and equal bytes give
//! equal identities whichever crash point or subset produced them, so identical images are
//! opened once. xxh3 is specified byte for byte, so identities are the same on every machine.
//!
//! The odds, and what they assume. Two different images share an identity exactly when the XOR,
//! over the sectors where they differ (and the length terms, if the lengths differ), of each
//! side's hash is zero. If the seeded hash behaved as a random function of (index, bytes) — an
//! assumption: xxh3 is a well-tested non-cryptographic hash, not a proven one — that XOR is a
//! uniform 128-bit value for any fixed pair, so a pair collides with probability 2⁻¹²⁸ and some
//! pair among n distinct images with at most n²/2¹²⁹ (about 1.4 × 10⁻²⁶ for the 3.1 million
//! distinct images of the largest check run so far). XOR is linear, so the odds are no better
//! than that assumption: inputs chosen with knowledge of the hash could be made to cancel; the
//! engine's pages are not such inputs. Seeding by index keeps two images holding the same
//! sectors in other places apart. A collision would skip one state, a risk taken to keep the
//! checker fast.

use std::sync::Arc;
use xxhash_rust::xxh3::xxh3_128_with_seed;

/// The identity of an image (or, XOR-ed, of a change to one).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct ImageId(pub u128);

impl std::ops::BitXor for ImageId {
    type Output = ImageId;
    fn bitxor(self, rhs: ImageId) -> ImageId {
        ImageId(self.0 ^ rhs.0)
    }
}

impl std::ops::BitXorAssign for ImageId {
    fn bitxor_assign(&mut self, rhs: ImageId) {
        self.0 ^= rhs.0;
    }
}

/// The index whose seed hashes the image length: no sector has it (an image of 2⁶⁴ − 1 sectors
/// does not fit memory).
const LENGTH_INDEX: u64 = u64::MAX;

impl ImageId {
    /// The contribution of sector `index` holding `bytes` (clipped to the image length).
    pub fn sector(index: u64, bytes: &[u8]) -> ImageId {
        ImageId(xxh3_128_with_seed(bytes, index))
    }

    /// The contribution of the image length.
    fn length(len: usize) -> ImageId {
        ImageId::sector(LENGTH_INDEX, &(len as u64).to_le_bytes())
    }

    /// The identity of a whole image cut into `sector_size` sectors.
    pub fn of(bytes: &[u8], sector_size: usize) -> ImageId {
        bytes
            .chunks(sector_size)
            .enumerate()
            .fold(ImageId::length(bytes.len()), |id, (i, s)| {
                id ^ ImageId::sector(i as u64, s)
            })
    }
}

/// The durable image of a crash point: what a power cut that keeps nothing leaves.
#[derive(Debug)]
pub(crate) struct Durable {
    pub bytes: Vec<u8>,
    pub id: ImageId,
}

impl Durable {
    pub fn new(bytes: Vec<u8>, sector_size: usize) -> Durable {
        let id = ImageId::of(&bytes, sector_size);
        Durable { bytes, id }
    }
}

/// A pending sector that a power cut may keep: its new bytes differ from the durable ones.
#[derive(Clone, Debug)]
pub(crate) struct Sector {
    /// Sector index on the disk.
    pub index: u64,
    /// The new bytes, clipped to the durable length.
    pub bytes: Arc<[u8]>,
    /// How keeping it changes the image's identity.
    pub delta: ImageId,
}

impl Sector {
    /// `None` when keeping `new` would change nothing.
    pub fn new(index: u64, old: &[u8], new: &[u8]) -> Option<Sector> {
        debug_assert_eq!(old.len(), new.len());
        (old != new).then(|| Sector {
            index,
            bytes: new.into(),
            delta: ImageId::sector(index, old) ^ ImageId::sector(index, new),
        })
    }
}

/// The durable image with `kept` written over it.
pub(crate) fn build<'a>(
    durable: &Durable,
    kept: impl Iterator<Item = &'a Sector>,
    sector_size: usize,
) -> Vec<u8> {
    let mut bytes = durable.bytes.clone();
    for s in kept {
        let at = usize::try_from(s.index).expect("a sector index fits memory") * sector_size;
        bytes[at..at + s.bytes.len()].copy_from_slice(&s.bytes);
    }
    bytes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_identity_of_a_built_image_is_the_durable_one_xor_the_deltas() {
        let durable = Durable::new((0..2000u32).map(|i| (i % 251) as u8).collect(), 512);
        let a = Sector::new(1, &durable.bytes[512..1024], &[7u8; 512]).unwrap();
        let b = Sector::new(3, &durable.bytes[1536..2000], &[9u8; 464]).unwrap();
        let built = build(&durable, [&a, &b].into_iter(), 512);
        assert_eq!(ImageId::of(&built, 512), durable.id ^ a.delta ^ b.delta);
        assert_ne!(ImageId::of(&built, 512), durable.id);
        // Keeping a sector whose bytes do not change is no state at all.
        assert!(Sector::new(0, &durable.bytes[..512], &durable.bytes[..512]).is_none());
        // The length is part of the identity.
        assert_ne!(
            ImageId::of(&[0u8; 512], 512),
            ImageId::of(&[0u8; 1024], 512)
        );
        // The same sectors at other places are another image.
        let (x, y) = ([1u8; 512], [2u8; 512]);
        assert_ne!(
            ImageId::of(&[x, y].concat(), 512),
            ImageId::of(&[y, x].concat(), 512)
        );
    }

    /// Identities are xxh3's, the same on every machine and in every build, so a check's counts do
    /// not depend on where it runs: the empty sector at index 0 hashes to XXH3-128's published
    /// test vector for the empty input with seed 0.
    #[test]
    fn identities_are_xxh3_128_seeded_by_the_sector_index() {
        assert_ne!(
            ImageId::sector(7, b"crashlab"),
            ImageId::sector(8, b"crashlab")
        );
        assert_eq!(
            ImageId::sector(0, b""),
            ImageId(0x99aa_06d3_0147_98d8_6001_c324_468d_497f)
        );
    }
}
