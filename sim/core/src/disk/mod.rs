//! `SimDisk`: a simulated disk behind the engine's [`Storage`] trait.
//!
//! # Model
//!
//! The disk holds a *durable image* (what survives a power cut) and the *pending* sectors written
//! since the last successful sync (the page cache). Reads see pending over durable. A successful
//! `sync` makes the pending sectors durable, with the current length or without it as the disk's
//! [`LengthModel`] says (`DiskConfig::length`; below). Everything is tracked per sector
//! (`DiskConfig::sector_size`, 512 B by default, 64 B to 4 KiB in sweeps): a partial-sector write
//! is a read-modify-write of its sector, and the sector is the unit a crash keeps or loses —
//! whole, or torn when sub-sector tears are on.
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
//! | crash ([`SimDisk::crash`]) | each pending sector is kept or lost independently (1/2 each); the length reverts to the last durable one | power cut with a volatile write cache: unsynced writes lost, torn at sector granularity, and reordered (a later write kept, an earlier one lost) |
//! | `sub_sector_tear` | at a crash, each sector kept is instead torn with this probability: a prefix of its new bytes kept and the rest old, or a prefix and a suffix kept and the middle old (1/2 each), split on [`TEAR_GRAIN`] (8-byte) boundaries drawn from the disk's seed (the first one log-uniformly, so a sector's first bytes split as often as the rest: `tear.rs`), after every keep-or-lose draw of the crash | a device whose atomic write unit is smaller than its sector: an 8-byte unit, the width an aligned word is written in, as on devices without power-loss protection or atomic-write guarantees; the split lands anywhere, so an 80-byte meta inside a 512-byte sector can tear |
//! | length `with-data` ([`LengthModel::WithData`]) | every successful sync makes the current length durable with the data | `fsync`; also `fdatasync` as Linux does it (a size change needed to read the data back is flushed) |
//! | length `own-barrier` ([`LengthModel::OwnBarrier`]) | a successful sync makes the current length durable only when the previous storage call (reads, `len` and failed syncs aside) was a `set_len` that grew the file; any other sync writes every pending sector back and persists a shrink, but not growth: sectors past the durable length are on the media yet out of its reach, so a crash loses them with the length (growth by writing, and the pages of a `set_len` not followed by its sync), until a sync after a growing `set_len` persists a length that covers them | a data sync that does not persist a size change (`fdatasync` as POSIX allows it, `F_FULLFSYNC`-less macOS, some network and FUSE file systems): growth needs its own barrier, the `truncate` + `fsync` bbolt issues before using new pages |
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
//! length reverts to the last durable one" (a crash never leaves an intermediate length, and a
//! sector kept by a crash past the durable length is lost with it); data written before an
//! unsynced truncation surviving it; tears inside an 8-byte unit; tears by the crash-state
//! checker's [`SimDisk::crash_with`], which keeps whole sectors (the checker tears by choosing a
//! smaller sector); faults in `len`; any latency variance (the cost model is deterministic);
//! crash-time corruption beyond keep, lose or tear; latent errors on sectors the engine never
//! wrote. Latent marks are media properties: they survive a crash, and vanish only when a write
//! covers the sector or a truncation frees it.
//!
//! # Caller contract
//!
//! The disk checks its caller: an `offset + len` that overflows `u64` is a programmer error and
//! panics. Conditions of the world (reads past the end, ENOSPC, injected EIO, lengths past
//! [`SIM_DISK_LEN_MAX`]) are `io::Error`s.
//!
//! # Memory
//!
//! Only written sectors are held, each buffer once and never changed in place, so a disk holds
//! about its file's length (plus what is pending) and [`SimDisk::fork`] shares a disk's image
//! instead of copying it; [`SimDisk::memory`] counts it (`memory.rs`).
//!
//! # Cost
//!
//! Every call is counted in [`IoStats`] and charged simulated time by the [`CostModel`]: a read or
//! write costs its latency plus its bytes at the model's bandwidth (whether it succeeded or not),
//! a sync costs its latency plus the bytes it made durable (so a failed or lying sync costs only
//! its latency), `set_len` and `len` cost nothing.

mod calls;
pub mod capture;
mod cost;
mod faults;
mod length;
mod memory;
pub mod pin;
mod sector_map;
mod sectors;
mod tear;
#[cfg(test)]
mod tests;

pub use cost::{CostModel, IoStats};
pub use faults::{FaultConfig, FaultCounts};
pub use length::LengthModel;
pub use memory::{distinct_held_bytes, DiskMemory};
pub use pin::{CrashPin, DirPin, PinnedCut};
pub use tear::TEAR_GRAIN;

use crashlab_engine::Storage;
use faults::FaultRng;
use sectors::{Fill, Keep, Sectors};
use std::collections::{BTreeMap, BTreeSet};
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
    /// When a length change becomes durable. `with-data` by default.
    #[serde(default)]
    pub length: LengthModel,
    pub faults: FaultConfig,
    pub cost: CostModel,
}

impl Default for DiskConfig {
    fn default() -> Self {
        DiskConfig {
            sector_size: SECTOR_SIZE_DEFAULT,
            length: LengthModel::WithData,
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
    /// Of those, sectors written into the durable image (torn ones included).
    pub kept: u64,
    /// Of those, sectors lost (not chosen, or past the durable length).
    pub lost: u64,
    /// Of the kept, the sectors a sub-sector tear left part new and part old.
    pub sub_sector_tears: u64,
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
    /// The sectors each write call since the last successful sync wrote, for counting torn
    /// writes.
    write_calls: Vec<Vec<u64>>,
    /// The last storage call (reads and `len` aside) was a `set_len` that grew the file: under
    /// [`LengthModel::OwnBarrier`] the next sync makes the length durable.
    grew: bool,
    counts: FaultCounts,
    stats: IoStats,
    /// Every fault injected, where: kept only when asked for ([`SimDisk::log_faults`]).
    fault_log: Option<Vec<FaultEvent>>,
    /// What the last power cut did to each pending sector, kept only while faults are logged.
    last_cut: Option<sectors::CrashApplied>,
    /// The memory tests' negative control: [`SimDisk::fork`] copies instead of sharing.
    debug_fork_copies: bool,
}

/// One fault the disk injected: its kind (`write_eio`, `latent`, `misdirect`, ...), the byte
/// offset it hit (the intended one for a misdirected write, the sector's for a latent error or
/// a bit flip; 0 for a sync) and the length of the call, at the disk's simulated time.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct FaultEvent {
    pub kind: &'static str,
    pub offset: u64,
    pub len: u64,
    pub sim_time_ns: u64,
}

pub(crate) fn assert_config(config: &DiskConfig) {
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

/// The image hash of bytes fed in pieces: xxh3, 64 bit, the same on every machine and every run
/// (reports and saved runs compare it across machines), and fast enough to hash a whole image at
/// the end of every run of a sweep.
pub type ImageHasher = xxhash_rust::xxh3::Xxh3;

impl SimDisk {
    /// An empty disk. Panics on a config that is a programmer error (sector size not a power of
    /// two or too big, a rate outside `[0, 1]`).
    pub fn new(seed: u64, config: DiskConfig) -> SimDisk {
        let disk = SimDisk {
            inner: Arc::new(Mutex::new(Inner::new(seed, config))),
        };
        capture::created(&disk);
        disk
    }

    /// How never-written sectors of a disk with `seed` and `config` read.
    fn fill_of(seed: u64, config: &DiskConfig) -> Fill {
        Fill {
            seed,
            garbage: config.faults.garbage_unwritten,
        }
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        // A poisoned lock only means another thread panicked mid-call; the state is still whole
        // (every mutation asserts before it changes anything, or completes).
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Power cut: each pending sector is independently kept (written into the durable image) or
    /// lost, chosen by the seeded rng with probability 1/2 (so subsets, tears and reorders all
    /// happen); then each sector chosen is torn with probability `sub_sector_tear` (drawn after
    /// every keep-or-lose choice, so a disk with tears off draws exactly as before); pending is
    /// cleared; the length reverts to the durable length (synced growth included, as the
    /// disk's [`LengthModel`] decides; a kept sector past it is lost). The disk stays usable
    /// afterwards (the machine rebooted): reads now see only the durable image.
    pub fn crash(&self) -> CrashOutcome {
        self.crash_pinned(None).0
    }

    /// [`SimDisk::crash`], keeping the pending sectors as `pin` says when there is one (any it
    /// does not name is lost) instead of as drawn. The draws are made either way, so the rest
    /// of the run's faults land where they would have. Returns, beside the outcome, what the
    /// cut kept as a pin (sectors past the durable length count as lost) and the pending
    /// sectors it lost, ascending.
    pub fn crash_pinned(&self, pin: Option<&CrashPin>) -> (CrashOutcome, CrashPin, Vec<u64>) {
        let mut inner = self.lock();
        let drawn = inner.draw_crash();
        let decided = pin.map_or(drawn, CrashPin::decisions);
        let mut left = decided.clone();
        let (outcome, applied) =
            inner.crash_applied(&mut |s| left.remove(&s).unwrap_or(Keep::Lost));
        let mut did = CrashPin::default();
        for s in applied.kept {
            match decided.get(&s) {
                Some(Keep::Torn(old)) if applied.torn.contains(&s) => {
                    did.torn.push((s, old.clone()))
                }
                _ => did.keep.push(s),
            }
        }
        (outcome, did, applied.lost)
    }

    /// Like [`SimDisk::crash`] but keeping exactly the pending sectors for which
    /// `keep(sector_index)` is true (asked once per pending sector, ascending), each whole: no
    /// tears. `keep` runs with the disk locked: it must not call into this disk.
    pub fn crash_with(&self, keep: &mut dyn FnMut(u64) -> bool) -> CrashOutcome {
        self.lock().crash_keeping(&mut |s| {
            if keep(s) {
                Keep::Whole
            } else {
                Keep::Lost
            }
        })
    }

    /// Make every pending sector and the current length durable, whatever the disk's
    /// [`LengthModel`]: the harness's own barrier (the crash-state checker's database is
    /// created durable before recording starts). Not a storage call: counted and charged as
    /// nothing, and no fault applies.
    pub fn make_all_durable(&self) {
        let mut inner = self.lock();
        let len = inner.sectors.len();
        inner.sectors.sync(len);
        inner.write_calls.clear();
        inner.grew = false;
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

    /// What reads see at `offset..offset + buf.len()`, which must lie inside the length. Not
    /// counted as a read, and no fault applies: for the harness's own copies of the file.
    pub fn read_seen(&self, offset: u64, buf: &mut [u8]) {
        self.lock().sectors.read(offset, buf);
    }

    /// Bytes `offset..offset + n` of the durable image and of what reads see, each clipped to its
    /// length: for the harness to tell what a crash did to a region. Not counted as reads.
    pub fn peek(&self, offset: u64, n: u64) -> (Vec<u8>, Vec<u8>) {
        let inner = self.lock();
        let s = &inner.sectors;
        let clip = |len: u64| {
            vec![
                0u8;
                usize::try_from(len.saturating_sub(offset).min(n)).expect("a region fits memory")
            ]
        };
        let (mut durable, mut visible) = (clip(s.durable_len()), clip(s.len()));
        s.read_durable(offset, &mut durable);
        s.read(offset, &mut visible);
        (durable, visible)
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

    /// Keep every fault injected from now on, for [`SimDisk::take_faults`] (a report's timeline;
    /// off by default, so a sweep pays nothing).
    pub fn log_faults(&self) {
        self.lock().fault_log.get_or_insert_with(Vec::new);
    }

    /// The faults injected since the last take (none unless [`SimDisk::log_faults`] is on).
    pub fn take_faults(&self) -> Vec<FaultEvent> {
        self.lock()
            .fault_log
            .as_mut()
            .map(std::mem::take)
            .unwrap_or_default()
    }

    /// What the last power cut did to each pending sector, once (none unless
    /// [`SimDisk::log_faults`] is on): (survived whole, torn, lost), each ascending.
    pub(crate) fn take_last_cut(&self) -> Option<(Vec<u64>, Vec<u64>, Vec<u64>)> {
        let a = self.lock().last_cut.take()?;
        let whole = a.kept.iter().copied().filter(|s| !a.torn.contains(s));
        Some((whole.collect(), a.torn, a.lost))
    }

    /// Stable 64-bit hash (xxh3) of the current image (what reads see), computed in pieces
    /// without a copy of the whole image: every run's report names it.
    pub fn image_hash(&self) -> u64 {
        let mut hasher = ImageHasher::new();
        self.lock()
            .sectors
            .each_image_piece(|piece| hasher.update(piece));
        hasher.digest()
    }
}

impl Inner {
    /// The state of an empty disk.
    fn new(seed: u64, config: DiskConfig) -> Inner {
        assert_config(&config);
        let fill = SimDisk::fill_of(seed, &config);
        Inner {
            seed,
            rng: FaultRng::new(seed),
            sectors: Sectors::new(u64::from(config.sector_size), fill),
            config,
            latent: BTreeSet::new(),
            write_calls: Vec::new(),
            grew: false,
            counts: FaultCounts::default(),
            stats: IoStats::default(),
            fault_log: None,
            last_cut: None,
            debug_fork_copies: false,
        }
    }

    /// A seeded cut's choices: each pending sector kept with probability 1/2, then each kept one
    /// torn with the `sub_sector_tear` rate (drawn after every keep-or-lose choice, so a disk
    /// with tears off draws exactly as before tears existed).
    fn draw_crash(&mut self) -> BTreeMap<u64, Keep> {
        let pending = self.sectors.pending_keys();
        let chosen: Vec<u64> = pending.into_iter().filter(|_| self.rng.coin()).collect();
        let (rate, ss) = (
            self.config.faults.sub_sector_tear,
            self.sectors.sector_size(),
        );
        let mut decided = BTreeMap::new();
        for s in chosen {
            let torn = self.rng.chance(rate).then(|| tear::draw(&mut self.rng, ss));
            decided.insert(s, torn.flatten().map_or(Keep::Whole, Keep::Torn));
        }
        decided
    }

    /// Note an injected fault, if faults are logged.
    fn fault(&mut self, kind: &'static str, offset: u64, len: u64) {
        let now = self.stats.sim_time_ns;
        if let Some(log) = &mut self.fault_log {
            log.push(FaultEvent {
                kind,
                offset,
                len,
                sim_time_ns: now,
            });
        }
    }

    fn crash_keeping(&mut self, keep: &mut dyn FnMut(u64) -> Keep) -> CrashOutcome {
        self.crash_applied(keep).0
    }

    fn crash_applied(
        &mut self,
        keep: &mut dyn FnMut(u64) -> Keep,
    ) -> (CrashOutcome, sectors::CrashApplied) {
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
        self.grew = false;
        let outcome = CrashOutcome {
            pending_sectors: (kept.len() + lost.len()) as u64,
            kept: kept.len() as u64,
            lost: lost.len() as u64,
            sub_sector_tears: applied.torn.len() as u64,
        };
        self.counts.crashes += 1;
        self.counts.sectors_kept_in_crash += outcome.kept;
        self.counts.sectors_lost_in_crash += outcome.lost;
        self.counts.torn_writes_in_crash += torn;
        self.counts.sub_sector_tears += outcome.sub_sector_tears;
        if self.fault_log.is_some() {
            self.last_cut = Some(applied.clone());
        }
        (outcome, applied)
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
