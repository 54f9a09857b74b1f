//! `SimDisk`: a simulated disk behind the engine's [`Storage`] trait.
//!
//! # Model
//!
//! The disk holds a *durable image* (what survives a power cut) and the *pending* sectors written
//! since the last successful sync (the page cache). Reads see pending over durable. A successful
//! `sync` makes every pending sector and the current length durable. Everything is tracked per
//! sector (`DiskConfig::sector_size`, 512 B by default): a partial-sector write is a
//! read-modify-write of its sector, and the sector is the unit a crash keeps or loses.
//!
//! # Fault model
//!
//! Every fault is switchable, has a rate (see [`FaultConfig`]) and is counted in [`FaultCounts`].
//! Every decision draws from one ChaCha8 stream seeded from the disk's seed, in call order: the
//! same calls on the same seed give the same faults, at the same places. Where a fault lands is
//! decided when it is injected and stored, so a retry does not heal it.
//!
//! | fault | what it does here | what it models |
//! |---|---|---|
//! | crash ([`SimDisk::crash`]) | each pending sector is kept or lost independently (1/2 each); the length reverts to the last synced one | power cut with a volatile write cache: unsynced writes lost, torn at sector granularity, and reordered (a later write kept, an earlier one lost) |
//! | `read_eio`, `write_eio` | the call fails with EIO and changes nothing; decided per call | transient controller, cable or path errors |
//! | `sync_eio` | EIO; each pending sector is dropped (1/2, seeded) from the page cache too, the rest stays pending; a later sync may succeed | Linux fsync failure: writeback error, dirty pages marked clean and dropped ("fsyncgate") |
//! | `latent` | one sector of a write call turns bad: reads covering it fail EIO until a write covers it | latent sector errors (media defects found on read, remapped on write) |
//! | `bit_flip` | after a sync, one bit of one durable sector flips | silent data corruption: media decay, firmware bugs, bad DMA |
//! | `misdirect` | a write lands at another offset with the same in-sector position, inside the old length; the intended place keeps its old bytes | misdirected writes (firmware or driver puts a block at the wrong LBA) |
//! | `enospc_capacity` | a write or `set_len` ending past the capacity fails `StorageFull` and changes nothing | a full file system |
//! | `lying_sync` | sync returns `Ok` and persists nothing | a disk whose cache ignores flushes: a negative control, the checker must report lost acknowledged data |
//! | `garbage_unwritten` | never-written sectors read seed-derived bytes, deterministic per sector | uninitialised blocks exposed (preallocated extents, raw devices) instead of zeros |
//!
//! Deliberately not modelled: the durability of a truncation or growth without sync beyond "the
//! length reverts to the last synced one" (a crash never leaves an intermediate length, and a
//! sector kept by a crash past the durable length is lost with it); data written before an
//! unsynced truncation surviving it; sub-sector tears (a sector is atomic); faults in `len`; any
//! latency variance (the cost model is deterministic); crash-time corruption beyond
//! keep-or-lose; latent errors on sectors the engine never wrote. Latent marks are media
//! properties: they survive a crash, and vanish only when a write covers the sector or a
//! truncation frees it.
//!
//! # Caller contract
//!
//! The disk checks its caller: an `offset + len` that overflows `u64` is a programmer error and
//! panics. Conditions of the world (reads past the end, ENOSPC, injected EIO, lengths past
//! [`SIM_DISK_LEN_MAX`]) are `io::Error`s.
//!
//! # Cost
//!
//! Every call is counted in [`IoStats`] and charged simulated time by the [`CostModel`]: a read or
//! write costs its latency plus its bytes at the model's bandwidth (whether it succeeded or not),
//! a sync costs its latency plus the bytes it made durable (so a failed or lying sync costs only
//! its latency), `set_len` and `len` cost nothing.

pub mod capture;
mod cost;
mod faults;
mod sectors;
#[cfg(test)]
mod tests;

pub use cost::{CostModel, IoStats};
pub use faults::{FaultConfig, FaultCounts};

use crashlab_engine::Storage;
use faults::FaultRng;
use sectors::{Fill, Sectors};
use std::collections::BTreeSet;
use std::io;
use std::sync::{Arc, Mutex, MutexGuard};

/// Largest length the simulated disk accepts, in bytes: images are sparse, but `image()` and
/// `durable_image()` materialise them, and a corrupt length must not ask for terabytes.
pub const SIM_DISK_LEN_MAX: u64 = 1 << 40;

/// Largest sector size accepted: a partial write copies its whole sector, and no real device has
/// sectors past a few KiB.
pub const SECTOR_SIZE_MAX: u32 = 1 << 20;

/// The default sector size, in bytes.
pub const SECTOR_SIZE_DEFAULT: u32 = 512;

/// Everything that shapes a disk apart from its seed.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct DiskConfig {
    /// Bytes per sector: a power of two, at most [`SECTOR_SIZE_MAX`]. 512 by default.
    pub sector_size: u32,
    pub faults: FaultConfig,
    pub cost: CostModel,
}

impl Default for DiskConfig {
    fn default() -> Self {
        DiskConfig {
            sector_size: SECTOR_SIZE_DEFAULT,
            faults: FaultConfig::none(),
            cost: CostModel::default(),
        }
    }
}

/// What a crash did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CrashOutcome {
    /// Sectors pending at the moment of the crash.
    pub pending_sectors: u64,
    /// Of those, sectors written into the durable image.
    pub kept: u64,
    /// Of those, sectors lost (not chosen, or past the durable length).
    pub lost: u64,
}

/// A simulated disk. Cheap to clone: clones share one disk (an `Arc<Mutex<..>>` inside), so the
/// runner keeps a handle while the engine owns another.
#[derive(Clone)]
pub struct SimDisk {
    inner: Arc<Mutex<Inner>>,
}

impl std::fmt::Debug for SimDisk {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let inner = self.lock();
        f.debug_struct("SimDisk")
            .field("seed", &inner.seed)
            .field("len", &inner.sectors.len())
            .field("durable_len", &inner.sectors.durable_len())
            .field("pending_sectors", &inner.sectors.pending_keys().len())
            .finish_non_exhaustive()
    }
}

struct Inner {
    seed: u64,
    config: DiskConfig,
    rng: FaultRng,
    sectors: Sectors,
    /// Latent-bad sectors: reads covering one fail until a write covers it.
    latent: BTreeSet<u64>,
    /// The sectors each write call since the last successful sync wrote, for counting tears.
    write_calls: Vec<Vec<u64>>,
    counts: FaultCounts,
    stats: IoStats,
}

fn assert_config(config: &DiskConfig) {
    let ss = config.sector_size;
    assert!(
        ss.is_power_of_two(),
        "sector size {ss} is not a power of two"
    );
    assert!(
        ss <= SECTOR_SIZE_MAX,
        "sector size {ss} above {SECTOR_SIZE_MAX}"
    );
    if let Err(why) = config.faults.validate() {
        panic!("{why}");
    }
}

fn eio(what: &str) -> io::Error {
    io::Error::other(format!("simulated EIO: {what}"))
}

fn too_large(end: u64) -> io::Error {
    io::Error::new(
        io::ErrorKind::FileTooLarge,
        format!("simulated disk: length {end} above {SIM_DISK_LEN_MAX}"),
    )
}

/// FNV-1a, 64 bit: a stable hash, the same on every machine and every run.
fn fnv1a_64(bytes: &[u8]) -> u64 {
    const OFFSET_BASIS: u64 = 0xcbf2_9ce4_8422_2325;
    const PRIME: u64 = 0x0000_0100_0000_01b3;
    bytes
        .iter()
        .fold(OFFSET_BASIS, |h, &b| (h ^ u64::from(b)).wrapping_mul(PRIME))
}

impl SimDisk {
    /// An empty disk. Panics on a config that is a programmer error (sector size not a power of
    /// two or too big, a rate outside `[0, 1]`).
    pub fn new(seed: u64, config: DiskConfig) -> SimDisk {
        assert_config(&config);
        let fill = Fill {
            seed,
            garbage: config.faults.garbage_unwritten,
        };
        let inner = Inner {
            seed,
            rng: FaultRng::new(seed),
            sectors: Sectors::new(u64::from(config.sector_size), fill),
            config,
            latent: BTreeSet::new(),
            write_calls: Vec::new(),
            counts: FaultCounts::default(),
            stats: IoStats::default(),
        };
        let disk = SimDisk {
            inner: Arc::new(Mutex::new(inner)),
        };
        capture::created(&disk);
        disk
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        // A poisoned lock only means another thread panicked mid-call; the state is still whole
        // (every mutation asserts before it changes anything, or completes).
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Power cut: each pending sector is independently kept (written into the durable image) or
    /// lost, chosen by the seeded rng with probability 1/2 (so subsets, tears and reorders all
    /// happen); pending is cleared; the durable length becomes the length as of the last
    /// successful sync (synced `set_len` growth included; a kept sector past it is lost). The
    /// disk stays usable afterwards (the machine rebooted): reads now see only the durable image.
    pub fn crash(&self) -> CrashOutcome {
        let mut inner = self.lock();
        let pending = inner.sectors.pending_keys();
        let chosen: BTreeSet<u64> = pending.into_iter().filter(|_| inner.rng.coin()).collect();
        inner.crash_keeping(&mut |s| chosen.contains(&s))
    }

    /// Like [`SimDisk::crash`] but keeping exactly the pending sectors for which
    /// `keep(sector_index)` is true (asked once per pending sector, ascending). `keep` runs with
    /// the disk locked: it must not call into this disk.
    pub fn crash_with(&self, keep: &mut dyn FnMut(u64) -> bool) -> CrashOutcome {
        self.lock().crash_keeping(keep)
    }

    /// Sector indexes with unsynced data, ascending.
    pub fn pending_sectors(&self) -> Vec<u64> {
        self.lock().sectors.pending_keys()
    }

    /// What a crash that loses all pending would leave.
    pub fn durable_image(&self) -> Vec<u8> {
        self.lock().sectors.durable_image()
    }

    /// What reads currently see (durable + pending). Not counted as reads.
    pub fn image(&self) -> Vec<u8> {
        self.lock().sectors.image()
    }

    /// Length as of the last successful sync (or crash).
    pub fn durable_len(&self) -> u64 {
        self.lock().sectors.durable_len()
    }

    /// Latent-bad sectors, ascending.
    pub fn latent_sectors(&self) -> Vec<u64> {
        self.lock().latent.iter().copied().collect()
    }

    pub fn seed(&self) -> u64 {
        self.lock().seed
    }

    pub fn fault_counts(&self) -> FaultCounts {
        self.lock().counts
    }

    pub fn io_stats(&self) -> IoStats {
        self.lock().stats
    }

    /// Replace the fault configuration (e.g. turn faults off for recovery checks). Faults already
    /// injected (latent sectors, flipped bits) stay. Panics on a rate outside `[0, 1]`.
    pub fn set_faults(&self, faults: FaultConfig) {
        let mut inner = self.lock();
        let config = DiskConfig {
            faults,
            ..inner.config.clone()
        };
        assert_config(&config);
        inner.sectors.fill.garbage = config.faults.garbage_unwritten;
        inner.config = config;
    }

    pub fn config(&self) -> DiskConfig {
        self.lock().config.clone()
    }

    /// Stable 64-bit FNV-1a hash of the current image (what reads see): for determinism tests.
    pub fn image_hash(&self) -> u64 {
        fnv1a_64(&self.image())
    }
}

impl Inner {
    fn crash_keeping(&mut self, keep: &mut dyn FnMut(u64) -> bool) -> CrashOutcome {
        let pending_before = self.sectors.pending_count();
        let applied = self.sectors.crash(keep);
        assert_eq!(
            applied.kept.len() + applied.lost.len(),
            pending_before as usize
        );
        assert_eq!(self.sectors.pending_count(), 0);
        let kept: BTreeSet<u64> = applied.kept.iter().copied().collect();
        let lost: BTreeSet<u64> = applied.lost.iter().copied().collect();
        let torn = self
            .write_calls
            .iter()
            .filter(|call| {
                call.iter().any(|s| kept.contains(s)) && call.iter().any(|s| lost.contains(s))
            })
            .count() as u64;
        self.write_calls.clear();
        let outcome = CrashOutcome {
            pending_sectors: (kept.len() + lost.len()) as u64,
            kept: kept.len() as u64,
            lost: lost.len() as u64,
        };
        self.counts.crashes += 1;
        self.counts.sectors_kept_in_crash += outcome.kept;
        self.counts.sectors_lost_in_crash += outcome.lost;
        self.counts.torn_writes_in_crash += torn;
        outcome
    }

    /// The end of `offset..offset + n`, asserting the caller's arithmetic.
    fn end_of(offset: u64, n: usize, call: &str) -> u64 {
        offset.checked_add(n as u64).unwrap_or_else(|| {
            panic!("{call}: offset {offset} + length {n} overflows u64 (caller bug)")
        })
    }

    /// `Err(StorageFull)` (counted) when `end` is past the configured capacity.
    fn check_capacity(&mut self, end: u64) -> io::Result<()> {
        match self.config.faults.enospc_capacity {
            Some(capacity) if end > capacity => {
                self.counts.enospc += 1;
                Err(io::Error::new(
                    io::ErrorKind::StorageFull,
                    format!("simulated ENOSPC: end {end} past capacity {capacity}"),
                ))
            }
            _ => Ok(()),
        }
    }

    fn read_at(&mut self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        let end = Self::end_of(offset, buf.len(), "read_at");
        self.stats.reads += 1;
        self.stats
            .charge(self.config.cost.read_ns(buf.len() as u64));
        if end > self.sectors.len() {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                format!(
                    "read of {offset}..{end} past the end {}",
                    self.sectors.len()
                ),
            ));
        }
        if self.rng.chance(self.config.faults.read_eio) {
            self.counts.read_eio += 1;
            return Err(eio(&format!("read of {offset}..{end}")));
        }
        let range = self.sectors.range_sectors(offset, buf.len() as u64);
        if let Some(&bad) = self.latent.range(range).next() {
            self.counts.latent_read_errors += 1;
            return Err(eio(&format!("latent sector error at sector {bad}")));
        }
        let never_written = self.sectors.read(offset, buf);
        if self.sectors.fill.garbage {
            self.counts.garbage_sector_reads += never_written;
        }
        self.stats.bytes_read += buf.len() as u64;
        Ok(())
    }

    fn write_at(&mut self, offset: u64, buf: &[u8]) -> io::Result<()> {
        let n = buf.len() as u64;
        let end = Self::end_of(offset, buf.len(), "write_at");
        self.stats.writes += 1;
        self.stats.charge(self.config.cost.write_ns(n));
        if end > SIM_DISK_LEN_MAX {
            return Err(too_large(end));
        }
        self.check_capacity(end)?;
        if self.rng.chance(self.config.faults.write_eio) {
            self.counts.write_eio += 1;
            return Err(eio(&format!("write of {offset}..{end}")));
        }
        if n == 0 {
            // Like `pwrite` of nothing: no data, no growth.
            return Ok(());
        }
        let landing = self.misdirect_target(offset, n).unwrap_or(offset);
        if end > self.sectors.len() {
            self.sectors.grow(end);
        }
        let written = self.sectors.write(landing, buf);
        for s in &written {
            self.latent.remove(s);
        }
        if self.rng.chance(self.config.faults.latent) {
            let bad = written[usize::try_from(self.rng.below(written.len() as u64))
                .expect("an index into written")];
            self.latent.insert(bad);
            self.counts.latent_sectors += 1;
        }
        self.write_calls.push(written);
        self.stats.bytes_written += n;
        assert!(
            self.sectors.len() >= end,
            "a write leaves the length covering it"
        );
        Ok(())
    }

    /// Where a misdirected write of `n` bytes meant for `offset` lands instead: same position in
    /// its sector, another sector, inside the length before the call. `None` when the write is not
    /// misdirected (by chance, or because no other place fits).
    fn misdirect_target(&mut self, offset: u64, n: u64) -> Option<u64> {
        if !self.rng.chance(self.config.faults.misdirect) {
            return None;
        }
        let ss = self.sectors.sector_size();
        let (meant, in_sector) = (offset / ss, offset % ss);
        let room = self.sectors.len().checked_sub(in_sector + n)?;
        let last_start = room / ss; // landing sectors 0..=last_start keep the data inside the length
        let others = last_start + 1 - u64::from(meant <= last_start);
        if others == 0 {
            return None;
        }
        let pick = self.rng.below(others);
        let sector = if meant <= last_start && pick >= meant {
            pick + 1
        } else {
            pick
        };
        assert_ne!(sector, meant);
        self.counts.misdirected_writes += 1;
        Some(sector * ss + in_sector)
    }

    fn sync(&mut self) -> io::Result<()> {
        self.stats.syncs += 1;
        if self.rng.chance(self.config.faults.sync_eio) {
            self.counts.sync_eio += 1;
            for s in self.sectors.pending_keys() {
                if self.rng.coin() {
                    self.sectors.drop_pending(s);
                    self.counts.sectors_dropped_by_failed_sync += 1;
                }
            }
            self.stats.charge(self.config.cost.sync_ns(0));
            return Err(eio("fsync failed; some dirty sectors were dropped"));
        }
        if self.config.faults.lying_sync {
            self.counts.lying_syncs += 1;
            self.stats.charge(self.config.cost.sync_ns(0));
            return Ok(());
        }
        let bytes = self.sectors.pending_bytes();
        self.sectors.sync();
        self.write_calls.clear();
        self.stats.charge(self.config.cost.sync_ns(bytes));
        if self.rng.chance(self.config.faults.bit_flip) {
            self.flip_a_bit();
        }
        Ok(())
    }

    /// Flip one seeded bit of one seeded durable sector, if any sector is durable.
    fn flip_a_bit(&mut self) {
        let durable = self.sectors.durable_keys();
        if durable.is_empty() {
            return;
        }
        let index = usize::try_from(self.rng.below(durable.len() as u64)).expect("an index");
        let s = durable[index];
        let bit = self.rng.below(self.sectors.durable_valid_bytes(s) * 8);
        self.sectors.flip_durable_bit(s, bit);
        self.counts.bit_flips += 1;
    }

    fn set_len(&mut self, len: u64) -> io::Result<()> {
        self.stats.set_lens += 1;
        if len > SIM_DISK_LEN_MAX {
            return Err(too_large(len));
        }
        self.check_capacity(len)?;
        if len >= self.sectors.len() {
            self.sectors.grow(len);
        } else {
            self.sectors.truncate(len);
            let first_gone = self.sectors.sector_count(len);
            drop(self.latent.split_off(&first_gone));
        }
        Ok(())
    }
}

impl Storage for SimDisk {
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        self.lock().read_at(offset, buf)
    }

    fn write_at(&self, offset: u64, buf: &[u8]) -> io::Result<()> {
        self.lock().write_at(offset, buf)
    }

    fn sync(&self) -> io::Result<()> {
        self.lock().sync()
    }

    fn len(&self) -> io::Result<u64> {
        Ok(self.lock().sectors.len())
    }

    fn set_len(&self, len: u64) -> io::Result<()> {
        self.lock().set_len(len)
    }
}

// `Storage` needs `Send + Sync`; keep that true by construction.
const _: () = {
    const fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<SimDisk>();
};
