//! Which faults the simulated disk injects, how often, and how many it injected; plus the seeded
//! random source every fault decision draws from. The fault model itself is described at the top
//! of [`super`].

use rand_chacha::ChaCha8Rng;
use rand_core::{Rng, SeedableRng};

/// Which faults to inject. Each rate is a probability per eligible event in `[0, 1]`; 0 turns the
/// fault off. `FaultConfig::default()` injects nothing.
#[derive(Clone, Debug, PartialEq, Default, serde::Serialize, serde::Deserialize)]
pub struct FaultConfig {
    /// Per read call: the read fails with EIO, nothing is read. A retry draws again.
    pub read_eio: f64,
    /// Per write call: the write fails with EIO, nothing is written. A retry draws again.
    pub write_eio: f64,
    /// Per sync call: fsync fails with Linux semantics. The call returns EIO and each pending
    /// sector is dropped with probability 1/2 (seeded): gone from the page cache too, so reads
    /// return the durable bytes. The rest stays pending; a later sync may succeed.
    pub sync_eio: f64,
    /// Per write call: one sector written by the call (seeded choice) becomes latent-bad. Reads
    /// covering it fail with EIO until a write covers that sector again.
    pub latent: f64,
    /// Per successful sync: one bit of one durable sector (seeded choice) flips.
    pub bit_flip: f64,
    /// Per write call: the data lands at another offset with the same position inside its sector,
    /// inside the length before the call (seeded); the intended place is not written.
    pub misdirect: f64,
    /// Bytes. A write or `set_len` whose end is past it fails with `StorageFull` and changes
    /// nothing.
    pub enospc_capacity: Option<u64>,
    /// Every sync returns `Ok` and persists nothing: a negative control, the checker must then
    /// report lost acknowledged data.
    pub lying_sync: bool,
    /// Sectors never written read as seed-derived bytes instead of zeros (after `set_len` growth
    /// too).
    pub garbage_unwritten: bool,
    /// Per sector a power cut keeps: the sector is torn instead, keeping only part of its new
    /// bytes (a prefix, or a prefix and a suffix, on [`TEAR_GRAIN`](super::TEAR_GRAIN)-byte
    /// boundaries drawn from the disk's seed) and its old bytes elsewhere. Absent from older case
    /// files, where it reads as 0.
    #[serde(default)]
    pub sub_sector_tear: f64,
}

impl FaultConfig {
    /// No faults at all.
    pub fn none() -> Self {
        FaultConfig::default()
    }

    /// True when this configuration injects nothing.
    pub fn is_none(&self) -> bool {
        *self == FaultConfig::none()
    }

    /// Each rate by name, in a fixed order.
    pub fn rates(&self) -> [(&'static str, f64); 7] {
        [
            ("read_eio", self.read_eio),
            ("write_eio", self.write_eio),
            ("sync_eio", self.sync_eio),
            ("latent", self.latent),
            ("bit_flip", self.bit_flip),
            ("misdirect", self.misdirect),
            ("sub_sector_tear", self.sub_sector_tear),
        ]
    }

    /// `Err` naming the first rate that is not a probability in `[0, 1]`. For checking user input
    /// before handing it to the disk, which asserts it.
    pub fn validate(&self) -> Result<(), String> {
        for (name, rate) in self.rates() {
            if !(0.0..=1.0).contains(&rate) {
                return Err(format!(
                    "fault rate {name} = {rate} is not a probability in [0, 1]"
                ));
            }
        }
        Ok(())
    }
}

/// How many faults of each kind the disk injected.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct FaultCounts {
    pub read_eio: u64,
    pub write_eio: u64,
    pub sync_eio: u64,
    pub sectors_dropped_by_failed_sync: u64,
    /// Sectors made latent-bad.
    pub latent_sectors: u64,
    /// Reads that failed because they covered a latent-bad sector.
    pub latent_read_errors: u64,
    pub bit_flips: u64,
    pub misdirected_writes: u64,
    pub enospc: u64,
    pub lying_syncs: u64,
    pub crashes: u64,
    pub sectors_lost_in_crash: u64,
    pub sectors_kept_in_crash: u64,
    /// Write calls partly kept and partly lost by a crash.
    pub torn_writes_in_crash: u64,
    /// Sectors a crash kept torn: part new, part old (counted only when the result differs from
    /// both, so a tear that changes nothing is not one).
    pub sub_sector_tears: u64,
    /// Never-written sectors read (per sector per read call) while `garbage_unwritten` was on.
    pub garbage_sector_reads: u64,
}

impl FaultCounts {
    /// Faults that change durable bytes behind the engine's back, which bbolt's format (no
    /// checksums on data pages) cannot always detect: bit flips and misdirected writes.
    pub fn corrupting(&self) -> u64 {
        self.bit_flips + self.misdirected_writes
    }

    /// Add every count of `other` (totals over a sweep). Destructured so a new field cannot be
    /// forgotten.
    pub fn accumulate(&mut self, other: &FaultCounts) {
        let FaultCounts {
            read_eio,
            write_eio,
            sync_eio,
            sectors_dropped_by_failed_sync,
            latent_sectors,
            latent_read_errors,
            bit_flips,
            misdirected_writes,
            enospc,
            lying_syncs,
            crashes,
            sectors_lost_in_crash,
            sectors_kept_in_crash,
            torn_writes_in_crash,
            sub_sector_tears,
            garbage_sector_reads,
        } = *other;
        self.read_eio += read_eio;
        self.write_eio += write_eio;
        self.sync_eio += sync_eio;
        self.sectors_dropped_by_failed_sync += sectors_dropped_by_failed_sync;
        self.latent_sectors += latent_sectors;
        self.latent_read_errors += latent_read_errors;
        self.bit_flips += bit_flips;
        self.misdirected_writes += misdirected_writes;
        self.enospc += enospc;
        self.lying_syncs += lying_syncs;
        self.crashes += crashes;
        self.sectors_lost_in_crash += sectors_lost_in_crash;
        self.sectors_kept_in_crash += sectors_kept_in_crash;
        self.torn_writes_in_crash += torn_writes_in_crash;
        self.sub_sector_tears += sub_sector_tears;
        self.garbage_sector_reads += garbage_sector_reads;
    }
}

/// Mixed into the seed for never-written sector contents, so garbage does not repeat the fault
/// decision stream.
const GARBAGE_SEED_SALT: u64 = 0x6761_7262_6167_6521; // "garbage!"

/// 2^-53: turns the top 53 bits of a `u64` into a uniform `f64` in `[0, 1)`.
const UNIT_F64_SCALE: f64 = 1.0 / (1u64 << 53) as f64;

/// The disk's one source of fault decisions: a ChaCha8 stream seeded from the disk's seed, drawn
/// in call order, so the same calls on the same seed make the same decisions.
#[derive(Clone, Debug)]
pub(crate) struct FaultRng {
    rng: ChaCha8Rng,
}

impl FaultRng {
    pub(crate) fn new(seed: u64) -> FaultRng {
        FaultRng {
            rng: ChaCha8Rng::seed_from_u64(seed),
        }
    }

    /// True with probability `rate`. Draws nothing when `rate` is 0, so a fault that is off does
    /// not shift the decisions of the others.
    pub(crate) fn chance(&mut self, rate: f64) -> bool {
        assert!((0.0..=1.0).contains(&rate), "rate {rate} not in [0, 1]");
        if rate == 0.0 {
            return false;
        }
        let unit = (self.rng.next_u64() >> 11) as f64 * UNIT_F64_SCALE;
        unit < rate
    }

    /// A fair coin.
    pub(crate) fn coin(&mut self) -> bool {
        self.rng.next_u64() & 1 == 1
    }

    /// Uniform in `0..n`, without modulo bias.
    pub(crate) fn below(&mut self, n: u64) -> u64 {
        assert!(n > 0, "below(0) has no value");
        let zone = u64::MAX - u64::MAX % n;
        loop {
            let x = self.rng.next_u64();
            if x < zone {
                return x % n;
            }
        }
    }
}

/// Fill `out` with bytes `offset..offset + out.len()` of never-written sector `sector` of a disk
/// seeded with `seed`: the same bytes every time, different per sector and per seed.
pub(crate) fn garbage_bytes(seed: u64, sector: u64, offset: usize, out: &mut [u8]) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ GARBAGE_SEED_SALT);
    rng.set_stream(sector);
    // The stream is 32-bit words: start at the word holding byte `offset` rather than generate
    // the bytes before it, and drop only the bytes of that word before `offset`.
    rng.set_word_pos((offset / 4) as u128);
    let skip = offset % 4;
    if skip == 0 {
        rng.fill_bytes(out);
    } else {
        let mut head = [0u8; 4];
        rng.fill_bytes(&mut head);
        let n = (4 - skip).min(out.len());
        out[..n].copy_from_slice(&head[skip..skip + n]);
        // The head took one whole word: the rest of the stream goes on from the next.
        rng.fill_bytes(&mut out[n..]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn none_is_none_and_default() {
        assert!(FaultConfig::none().is_none());
        assert_eq!(FaultConfig::none(), FaultConfig::default());
        let on = FaultConfig {
            garbage_unwritten: true,
            ..FaultConfig::none()
        };
        assert!(!on.is_none());
        let cap = FaultConfig {
            enospc_capacity: Some(0),
            ..FaultConfig::none()
        };
        assert!(!cap.is_none());
    }

    #[test]
    fn validate_rejects_non_probabilities() {
        assert!(FaultConfig::none().validate().is_ok());
        let bad = FaultConfig {
            bit_flip: 1.5,
            ..FaultConfig::none()
        };
        assert!(bad.validate().unwrap_err().contains("bit_flip"));
        let nan = FaultConfig {
            read_eio: f64::NAN,
            ..FaultConfig::none()
        };
        assert!(nan.validate().is_err());
    }

    #[test]
    fn rng_is_deterministic_and_in_range() {
        let mut a = FaultRng::new(7);
        let mut b = FaultRng::new(7);
        for n in 1..200 {
            let x = a.below(n);
            assert_eq!(x, b.below(n));
            assert!(x < n);
        }
        assert!(!a.chance(0.0));
        assert!(a.chance(1.0));
        let heads = (0..1000).filter(|_| a.coin()).count();
        assert!((400..600).contains(&heads), "{heads}");
        let hits = (0..1000).filter(|_| a.chance(0.25)).count();
        assert!((180..320).contains(&hits), "{hits}");
    }

    #[test]
    fn garbage_is_stable_per_sector_and_seed() {
        let mut x = [0u8; 64];
        let mut y = [0u8; 64];
        garbage_bytes(1, 5, 0, &mut x);
        garbage_bytes(1, 5, 0, &mut y);
        assert_eq!(x, y);
        assert_ne!(x, [0u8; 64]);
        garbage_bytes(1, 6, 0, &mut y);
        assert_ne!(x, y);
        garbage_bytes(2, 5, 0, &mut y);
        assert_ne!(x, y);
        let mut tail = [0u8; 16];
        garbage_bytes(1, 5, 48, &mut tail);
        assert_eq!(tail, x[48..]);
    }

    /// Any part of a sector's garbage is that part of the bytes generated from its start, at
    /// every offset (inside a stream word or not) and length.
    #[test]
    fn garbage_from_an_offset_is_the_tail_of_the_garbage_from_zero() {
        let mut whole = [0u8; 300];
        let mut rng = ChaCha8Rng::seed_from_u64(9 ^ GARBAGE_SEED_SALT);
        rng.set_stream(3);
        rng.fill_bytes(&mut whole);
        for offset in 0..40 {
            for len in [0, 1, 2, 3, 5, 8, 63, 64, 65, 200] {
                let mut got = vec![0u8; len];
                garbage_bytes(9, 3, offset, &mut got);
                assert_eq!(
                    got,
                    whole[offset..offset + len],
                    "offset {offset} len {len}"
                );
            }
        }
    }
}
