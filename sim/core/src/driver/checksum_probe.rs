//! The checksum probe: a flipped bit inside a range the engine covers by a checksum must read as
//! that range lost.
//!
//! Recovery checks judge the file the disk left, and a disk under `default` never flips a bit,
//! so a checksum that leaves a field out, or a check that is skipped on one path, passes every
//! one of them: the engine writes and reads its own sums consistently. Under `corruption` the
//! disk does flip bits, but then it takes the blame for whatever follows. The probe asks the
//! checksum's one question directly. After a judged recovery it takes the file as the engine
//! now sees it and one of the ranges the engine declares ([`Capabilities::checksummed`]), and
//! opens two copies of it ([`Patched`]: reads go to the disk, the range patched): one with a
//! seeded bit of the range flipped, one with the range zeroed. A checksum that does its job
//! makes the engine reject both alike — fall back to another copy, or refuse — so both opens
//! must give the same state, or both fail. Any other pair is [`Verdict::ChecksumProbe`]; a
//! panic in either is [`Verdict::Panic`].
//!
//! [`Capabilities::checksummed`]: crate::adapter::Capabilities::checksummed

use super::patched::Patched;
use super::recovery::{open_image, Recovered};
use super::{Driver, Hooks, Step};
use crate::adapter::Engine;
use crate::op::{path_to_string, Name, Path};
use crate::verdict::Verdict;
use crashlab_engine::Storage;
use crashlab_models::KvModel;
use std::collections::BTreeSet;
use std::ops::Range;

/// Recoveries before the last that the probe visits: one in this many (seeded).
const PROBE_ONE_IN: u64 = 4;

impl<E: Engine, H: Hooks<E>> Driver<'_, E, H> {
    /// Probe one declared range of the file as it is now, at one bit, both drawn from the
    /// probe's stream: after the run's last recovery (`last`) always, after the others one
    /// time in [`PROBE_ONE_IN`]. The probe's two opens are most of its cost; one range per
    /// probe and a quarter of the recoveries keep a sweep within a tenth of its time without it.
    pub(super) fn probe_checksums(&mut self, last: bool) -> Step<()> {
        if !self.settings.checksum_probes || self.caps.checksummed.is_empty() {
            return Ok(());
        }
        if !last && self.probe_rng.below(PROBE_ONE_IN) != 0 {
            return Ok(());
        }
        // A directory engine's ranges would need a file each: none declares any.
        let Some(disk) = self.medium.disk() else {
            return Ok(());
        };
        let len = disk.len().expect("a simulated disk knows its length");
        let ranges: Vec<Range<u64>> = self.caps.checksummed.ranges().collect();
        let range = self.probe_rng.pick(&ranges).clone();
        let bit = self.probe_rng.below((range.end - range.start) * 8);
        if range.end > len {
            return Ok(());
        }
        self.stats.checksum_probes += 1;
        let file = match last {
            true => "the file the run ends with".to_string(),
            false => format!("the file {}", self.file_from),
        };
        self.probe_one(len, &file, range, bit)
    }

    /// Flip bit `bit` of `range` in one copy of the disk's file (`len` bytes; `file`, for
    /// messages), zero `range` in another, and compare what opening each gives.
    fn probe_one(&self, len: u64, file: &str, range: Range<u64>, bit: u64) -> Step<()> {
        let disk = self.medium.disk().expect("the probe runs on one disk");
        let mut flipped = vec![0u8; (range.end - range.start) as usize];
        disk.read_seen(range.start, &mut flipped);
        flipped[(bit / 8) as usize] ^= 1 << (bit % 8);
        let zeroed = vec![0u8; flipped.len()];
        let open = |patch: Vec<u8>| {
            let copy = Patched::new(disk, len, range.start, patch);
            open_image::<E>(Box::new(copy), &self.cfg.engine, false)
        };
        let (got, want) = (open(flipped), open(zeroed));
        let at = range.start + bit / 8;
        let what = format!(
            "bit {} of byte {at} flipped, in checksummed range {range:?} of {file}",
            bit % 8
        );
        for r in [&got, &want] {
            if let Recovered::Panic(p) = r {
                let detail = format!("{what}: the engine panicked: {p}");
                return Err(self.violation(Verdict::Panic, detail));
            }
        }
        match disagreement(&got, &want) {
            None => Ok(()),
            Some(how) => Err(self.violation(Verdict::ChecksumProbe, format!("{what}: {how}"))),
        }
    }
}

/// How the open of the flipped copy (`got`) differs from the open of the zeroed one (`want`),
/// if it does. Two refusals agree whatever their words: a meta whose checksum fails and a meta
/// of zeros are refused for different reasons.
fn disagreement(got: &Recovered, want: &Recovered) -> Option<String> {
    match (got, want) {
        (Recovered::State(x), Recovered::State(y)) if x == y => None,
        (Recovered::Corrupt(_), Recovered::Corrupt(_)) => None,
        (Recovered::State(x), Recovered::State(y)) => Some(format!(
            "it opens to another state than with the range zeroed ({})",
            first_difference(x, y)
        )),
        (Recovered::State(_), Recovered::Corrupt(e)) => Some(format!(
            "it opens, where with the range zeroed the engine refuses ({e})"
        )),
        (Recovered::Corrupt(e), _) => Some(format!(
            "the engine refuses it ({e}), where with the range zeroed it opens"
        )),
        (Recovered::Panic(_), _) | (_, Recovered::Panic(_)) => {
            unreachable!("panics are reported before")
        }
    }
}

/// The first bucket, in path order, whose contents differ between two states.
fn first_difference(got: &KvModel, want: &KvModel) -> String {
    let (a, b) = (got.flatten(), want.flatten());
    let paths: BTreeSet<_> = a.keys().chain(b.keys()).collect();
    for path in paths {
        let name = path_name(path);
        match (a.get(path), b.get(path)) {
            (Some(x), Some(y)) if x.values == y.values && x.sequence == y.sequence => continue,
            (Some(x), Some(y)) => {
                return format!(
                    "{name}: {} keys and sequence {} against {} keys and sequence {}",
                    x.values.len(),
                    x.sequence,
                    y.values.len(),
                    y.sequence
                )
            }
            (Some(_), None) => return format!("{name} exists only in the flipped copy"),
            (None, _) => return format!("{name} exists only with the range zeroed"),
        }
    }
    unreachable!("two states that differ differ in a bucket")
}

fn path_name(path: &[Vec<u8>]) -> String {
    if path.is_empty() {
        return "the top level".into();
    }
    let names: Path = path.iter().map(|n| Name::new(n.clone())).collect();
    format!("bucket `{}`", path_to_string(&names))
}
