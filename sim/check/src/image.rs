//! Crash images and their identity.
//!
//! A crash image is the durable image of a crash point with some of its pending sectors written
//! over it. Its identity is 128 bits: the length mixed with the XOR of one keyed hash per sector
//! (two independent 64-bit lanes). XOR lets the identity of "durable image + these sectors" be
//! computed from per-sector deltas without building the image, and equal bytes give equal
//! identities whichever crash point or subset produced them, so identical images are opened once.
//! Two different images share an identity with probability about n²/2¹²⁹ among n images; a
//! collision would skip one state, a risk taken to keep the checker fast.

use std::sync::Arc;

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

/// splitmix64's finaliser: every input bit reaches every output bit.
fn mix(mut x: u64) -> u64 {
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// One 64-bit lane: the bytes read as little-endian words, each folded in with a multiply and a
/// shift, keyed by the lane seed and the sector index.
fn lane(seed: u64, index: u64, bytes: &[u8]) -> u64 {
    let mut h = mix(seed ^ index);
    for chunk in bytes.chunks(8) {
        let mut word = [0u8; 8];
        word[..chunk.len()].copy_from_slice(chunk);
        h = (h ^ u64::from_le_bytes(word)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        h ^= h >> 29;
    }
    mix(h ^ bytes.len() as u64)
}

impl ImageId {
    /// The contribution of sector `index` holding `bytes` (clipped to the image length).
    pub fn sector(index: u64, bytes: &[u8]) -> ImageId {
        let lo = lane(0x243f_6a88_85a3_08d3, index, bytes);
        let hi = lane(0x1319_8a2e_0370_7344, index, bytes);
        ImageId(u128::from(hi) << 64 | u128::from(lo))
    }

    /// The contribution of the image length.
    fn length(len: usize) -> ImageId {
        ImageId::sector(u64::MAX, &(len as u64).to_le_bytes())
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
    }
}
