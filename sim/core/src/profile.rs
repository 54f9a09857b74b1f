//! What a seed decides about the disk: the fault profile. (The engine's options are drawn by its
//! adapter's configuration, `EngineConfig::from_seed`.)
//!
//! Swarm testing: under the `default` profile each fault kind is switched on or off per seed and
//! its rate drawn, so some seeds hammer one fault and others combine several. Bit flips and
//! misdirected writes are not in `default`: the engine, like bbolt, keeps no checksums on data
//! pages and does not claim to survive them; the `corruption` profile adds them. The negative
//! controls make the harness itself fail on purpose: `lying-sync` (the disk acknowledges syncs
//! and persists nothing) and `no-barrier` (a storage wrapper drops the sync between a commit's
//! data pages and its meta page). Both must be reported as violations.

use crate::control::Control;
use crate::disk::{DiskConfig, FaultConfig};
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
}

impl Profile {
    pub const ALL: [Profile; 5] = [
        Profile::None,
        Profile::Default,
        Profile::Corruption,
        Profile::LyingSync,
        Profile::NoBarrier,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Profile::None => "none",
            Profile::Default => "default",
            Profile::Corruption => "corruption",
            Profile::LyingSync => "lying-sync",
            Profile::NoBarrier => "no-barrier",
        }
    }

    /// The storage control this profile puts between the engine and the disk.
    pub fn control(self) -> Control {
        match self {
            Profile::NoBarrier => Control::NoBarrier,
            _ => Control::None,
        }
    }

    /// Whether violations are the expected result (a harness self-test).
    pub fn is_negative_control(self) -> bool {
        matches!(self, Profile::LyingSync | Profile::NoBarrier)
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
    if matches!(profile, Profile::Default | Profile::Corruption) {
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
    f.lying_sync = profile == Profile::LyingSync;
    DiskConfig {
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
    }
}
