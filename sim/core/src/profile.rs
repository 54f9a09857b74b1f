//! What a seed decides about the disk: its sector size, its length model and the fault profile.
//! (The engine's options are drawn by its adapter's configuration, `EngineConfig::from_seed`.)
//!
//! Swarm testing: under the `default` profile each fault kind is switched on or off per seed and
//! its rate drawn, so some seeds hammer one fault and others combine several. Bit flips and
//! misdirected writes are not in `default`: the engine, like bbolt, keeps no checksums on data
//! pages and does not claim to survive them; the `corruption` profile adds them, and blames the
//! disk for a wrong answer only after it has corrupted something (`Driver::disk_may_explain`).
//! The negative controls make the harness itself fail on purpose: `lying-sync` (the disk
//! acknowledges syncs and persists nothing), `no-barrier` (a storage wrapper drops the sync
//! between a commit's data pages and its meta page) and `no-growth-sync` (on an `own-barrier`
//! disk, a storage wrapper drops the sync that follows the file's growth). All must be reported
//! as violations.
//!
//! The `scale` profile is `default`'s faults (without an ENOSPC capacity below the scale it
//! writes) on 512-byte pages, with the scale patterns of [`crate::workload::scale`] added to the
//! workload: fill-then-delete bursts past 0xFFFF free pages, deep trees, thousands of buckets and
//! long overflow chains, where the format changes shape. A sweep's `thresholds:` line says how
//! often each was reached.
//!
//! Under every profile each seed also draws, from streams of their own (so no other choice
//! moves): the sector size, 64 B to 4 KiB ([`sector_size`]: 512 B on a quarter of the seeds, each
//! other power of two on an eighth), and the length model, `with-data` or `own-barrier` (1/2
//! each, [`length_model`]). Sub-sector tears are a fault of `default` and `corruption`, drawn
//! after every other fault so the earlier draws stay what they were.

use crate::control::Control;
use crate::disk::{DiskConfig, FaultConfig, LengthModel};
use crate::rng::SimRng;
use std::fmt;
use std::str::FromStr;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Profile {
    /// No disk faults; power cuts still happen.
    None,
    /// Swarm over the faults the engine must survive.
    Default,
    /// `Default` plus bit flips and misdirected writes.
    Corruption,
    /// Negative control: syncs lie.
    LyingSync,
    /// Negative control: the sync between data pages and meta is dropped.
    NoBarrier,
    /// Negative control: on an `own-barrier` disk, the sync that follows the file's growth is
    /// dropped.
    NoGrowthSync,
    /// `Default`'s faults on small pages, with workloads that reach the format's scale
    /// thresholds.
    Scale,
}

impl Profile {
    pub const ALL: [Profile; 7] = [
        Profile::None,
        Profile::Default,
        Profile::Corruption,
        Profile::LyingSync,
        Profile::NoBarrier,
        Profile::NoGrowthSync,
        Profile::Scale,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Profile::None => "none",
            Profile::Default => "default",
            Profile::Corruption => "corruption",
            Profile::LyingSync => "lying-sync",
            Profile::NoBarrier => "no-barrier",
            Profile::NoGrowthSync => "no-growth-sync",
            Profile::Scale => "scale",
        }
    }

    /// The storage control this profile puts between the engine and the disk.
    pub fn control(self) -> Control {
        match self {
            Profile::NoBarrier => Control::NoBarrier,
            Profile::NoGrowthSync => Control::NoGrowthSync,
            _ => Control::None,
        }
    }

    /// `Err` when this profile cannot run `engine`: a storage-wrapper control (`no-barrier`,
    /// `no-growth-sync`) wraps one file's storage, and an engine of several files (capability
    /// `directory`) has none to wrap. Refused up front, never run without the control.
    pub fn fits(self, engine: &str, directory: bool) -> Result<(), String> {
        if directory && self.control().is_storage_wrapper() {
            return Err(format!(
                "profile {self} wraps one file's storage and {engine} keeps several files; its \
                 profiles are none, default, corruption, lying-sync and scale"
            ));
        }
        Ok(())
    }

    /// Whether the workload adds the scale patterns (and the engine takes small pages).
    pub fn reaches_scale(self) -> bool {
        self == Profile::Scale
    }

    /// Whether violations are the expected result (a harness self-test).
    pub fn is_negative_control(self) -> bool {
        matches!(
            self,
            Profile::LyingSync | Profile::NoBarrier | Profile::NoGrowthSync
        )
    }
}

impl fmt::Display for Profile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Profile {
    type Err = String;
    fn from_str(s: &str) -> Result<Profile, String> {
        Profile::ALL
            .into_iter()
            .find(|p| p.name() == s)
            .ok_or_else(|| {
                let names: Vec<&str> = Profile::ALL.iter().map(|p| p.name()).collect();
                format!(
                    "unknown profile `{s}` (expected one of: {})",
                    names.join(", ")
                )
            })
    }
}

/// Sector sizes a sweep draws from besides 512 B, each on an eighth of the seeds: the meta (80
/// bytes) spans two sectors at 64 B, and a 4 KiB sector holds several small pages.
const SECTOR_SIZES_OTHER: [u32; 6] = [64, 128, 256, 1024, 2048, 4096];

/// The sector size of a seed's disk: 512 B (today's drives' logical sector, and the size every
/// case without a `disk` line replays with) on a quarter of the seeds, each of
/// `SECTOR_SIZES_OTHER` (64 B to 4 KiB) on an eighth. From a stream of its own.
pub fn sector_size(seed: u64) -> u32 {
    let mut r = SimRng::derive(seed, "disk-sector");
    if r.chance(0.25) {
        512
    } else {
        *r.pick(&SECTOR_SIZES_OTHER)
    }
}

/// The length model of a seed's disk: `with-data` or `own-barrier`, 1/2 each, from a stream of
/// its own. The runner and the crash-state checker draw the same one for a seed.
pub fn length_model(seed: u64) -> LengthModel {
    if SimRng::derive(seed, "disk-length").chance(0.5) {
        LengthModel::OwnBarrier
    } else {
        LengthModel::WithData
    }
}

/// The disk for a seed under a profile.
pub fn disk_config(seed: u64, profile: Profile) -> DiskConfig {
    let mut r = SimRng::derive(seed, "faults");
    let mut f = FaultConfig::none();
    let maybe = |r: &mut SimRng, lo: f64, hi: f64| -> f64 {
        if r.chance(0.5) {
            lo + (hi - lo) * (r.below(1000) as f64 / 1000.0)
        } else {
            0.0
        }
    };
    let swarmed = matches!(
        profile,
        Profile::Default | Profile::Corruption | Profile::Scale
    );
    if swarmed {
        f.read_eio = maybe(&mut r, 0.0005, 0.01);
        f.write_eio = maybe(&mut r, 0.001, 0.02);
        f.sync_eio = maybe(&mut r, 0.005, 0.05);
        f.latent = maybe(&mut r, 0.0001, 0.001);
        f.garbage_unwritten = r.chance(0.5);
        if r.chance(0.3) {
            f.enospc_capacity = Some(r.range(64, 2048) * 1024);
        }
    }
    if profile == Profile::Corruption {
        f.bit_flip = maybe(&mut r, 0.01, 0.1);
        f.misdirect = maybe(&mut r, 0.001, 0.01);
    }
    if swarmed {
        // Last: every draw above stays what it was before tears existed.
        f.sub_sector_tear = maybe(&mut r, 0.05, 0.5);
    }
    if profile == Profile::Scale {
        // A capacity of kilobytes would end every scale pattern at its first fill; one past
        // the largest fill still lets a disk fill up in the middle of the last ones.
        f.enospc_capacity = f.enospc_capacity.map(|c| c * 32);
    }
    f.lying_sync = profile == Profile::LyingSync;
    let length = match profile.control().length_model() {
        Some(forced) => forced,
        None => length_model(seed),
    };
    DiskConfig {
        sector_size: sector_size(seed),
        length,
        faults: f,
        ..DiskConfig::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn profiles_parse_and_print() {
        for p in Profile::ALL {
            assert_eq!(p.name().parse::<Profile>(), Ok(p));
        }
        assert!("nope"
            .parse::<Profile>()
            .unwrap_err()
            .contains("expected one of"));
    }

    #[test]
    fn swarm_switches_faults_per_seed() {
        let configs: Vec<FaultConfig> = (0..64)
            .map(|s| disk_config(s, Profile::Default).faults)
            .collect();
        assert!(configs.iter().any(|f| f.read_eio > 0.0));
        assert!(configs.iter().any(|f| f.read_eio == 0.0));
        assert!(configs.iter().any(|f| f.enospc_capacity.is_some()));
        assert!(configs.iter().all(|f| f.bit_flip == 0.0 && !f.lying_sync));
        assert_eq!(
            disk_config(3, Profile::Default),
            disk_config(3, Profile::Default)
        );
        assert!(disk_config(3, Profile::None).faults.is_none());
        assert!(disk_config(3, Profile::LyingSync).faults.lying_sync);
        assert!(configs.iter().any(|f| f.sub_sector_tear > 0.0));
        assert!(configs.iter().any(|f| f.sub_sector_tear == 0.0));
        assert!((0..64).all(|s| disk_config(s, Profile::None).faults.sub_sector_tear == 0.0));
    }

    #[test]
    fn sector_sizes_and_length_models_are_swarmed_in_every_profile() {
        let seeds = 0..4000u64;
        let mut by_size = std::collections::BTreeMap::new();
        for s in seeds.clone() {
            *by_size.entry(sector_size(s)).or_insert(0u32) += 1;
        }
        let sizes: Vec<u32> = by_size.keys().copied().collect();
        assert_eq!(sizes, [64, 128, 256, 512, 1024, 2048, 4096]);
        assert!((850..1150).contains(&by_size[&512]), "{by_size:?}");
        assert!(by_size.values().all(|&n| n > 380), "{by_size:?}");
        let own = seeds
            .clone()
            .filter(|&s| length_model(s) == LengthModel::OwnBarrier)
            .count();
        assert!((1800..2200).contains(&own), "{own}");
        for p in Profile::ALL {
            let d = disk_config(9, p);
            assert_eq!(d.sector_size, sector_size(9), "{p}");
        }
        assert!(seeds
            .clone()
            .all(|s| disk_config(s, Profile::NoGrowthSync).length == LengthModel::OwnBarrier));
        assert!(
            seeds
                .filter(|&s| disk_config(s, Profile::Default).length != length_model(s))
                .count()
                == 0
        );
    }
}
