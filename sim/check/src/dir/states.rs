//! The crash states of one crash point of a directory engine: the metadata subsets the file
//! system's model allows, crossed with subsets of every file's pending data sectors (each kept
//! whole or lost: sector writes are atomic, tears are the seeded runner's).
//!
//! Bounds, per crash point:
//! - **metadata**: every state the model allows — the `n + 1` prefixes under `ordered`, every
//!   consistent subset under `strict` up to [`STRICT_ENUMERATION_OPS_MAX`] pending operations —
//!   or, past that, [`META_SAMPLES`] seeded draws (each operation kept with probability 1/2,
//!   moot ones dropped) with nothing kept and everything kept added;
//! - **data**: every subset of the pending sectors of all files together while there are at
//!   most [`DATA_EXHAUSTIVE_SECTORS_MAX`] of them and metadata states × data subsets stay
//!   within [`STATES_PER_POINT_MAX`]; otherwise, for each metadata state, nothing kept,
//!   everything kept, each file's sectors all kept with the others' lost and all lost with the
//!   others' kept, then seeded subsets (each sector kept with probability 1/2) up to
//!   `STATES_PER_POINT_MAX / metadata states` (at least 4).
//!
//! Exhaustive data subsets come in order of how many sectors they keep, so the first violating
//! state met at a crash point keeps as few sectors as any violating state of its metadata
//! subset does.

use crashlab_sim::fs::{
    replay_chosen, FileId, MetaModel, MetaSubset, SimFs, STRICT_ENUMERATION_OPS_MAX,
};
use crashlab_sim::rng::SimRng;
use std::collections::BTreeSet;

/// Metadata states drawn at a crash point whose `strict` states are not enumerated.
pub const META_SAMPLES: usize = 256;
/// Most pending data sectors (over every file) whose subsets are all visited.
pub const DATA_EXHAUSTIVE_SECTORS_MAX: usize = 10;
/// Most states generated at one crash point.
pub const STATES_PER_POINT_MAX: usize = 4096;

/// One crash state: the metadata operations kept, and the pending sectors kept (by index into
/// [`PointStates::units`]).
pub(crate) struct State {
    pub meta: usize,
    pub keep: Vec<usize>,
}

pub(crate) struct PointStates {
    pub metas: Vec<MetaSubset>,
    pub meta_exhaustive: bool,
    /// Every pending data sector: its file and its sector index.
    pub units: Vec<(FileId, u64)>,
    pub states: Vec<State>,
    pub data_exhaustive: bool,
    pub pending_meta: usize,
}

/// The crash states of the crash point `fs` (a copy of the file system at it).
pub(crate) fn enumerate(fs: &SimFs, model: MetaModel, rng: &mut SimRng) -> PointStates {
    let pending = fs.pending_meta();
    let (metas, meta_exhaustive) = match fs.meta_crash_states() {
        Ok(all) => (all, true),
        Err(_) => (sample_meta(fs, rng), false),
    };
    debug_assert!(meta_exhaustive || model == MetaModel::Strict);
    let units: Vec<(FileId, u64)> = fs
        .pending_data()
        .into_iter()
        .flat_map(|(f, sectors)| sectors.into_iter().map(move |s| (f, s)))
        .collect();
    let n = units.len();
    let data_exhaustive = n <= DATA_EXHAUSTIVE_SECTORS_MAX
        && metas.len().saturating_mul(1 << n) <= STATES_PER_POINT_MAX;
    let mut states = Vec::new();
    for meta in 0..metas.len() {
        let subsets = if data_exhaustive {
            every_subset(n)
        } else {
            sample_data(&units, (STATES_PER_POINT_MAX / metas.len()).max(4), rng)
        };
        states.extend(subsets.into_iter().map(|keep| State { meta, keep }));
    }
    PointStates {
        metas,
        meta_exhaustive,
        units,
        states,
        data_exhaustive,
        pending_meta: pending.len(),
    }
}

fn sample_meta(fs: &SimFs, rng: &mut SimRng) -> Vec<MetaSubset> {
    let (durable, pending) = (fs.durable_directory(), fs.pending_meta());
    assert!(pending.len() > STRICT_ENUMERATION_OPS_MAX);
    let mut out = BTreeSet::new();
    out.insert(MetaSubset::default());
    out.insert(replay_chosen(&durable, &pending, &mut |_| true).1);
    for _ in 0..META_SAMPLES {
        out.insert(replay_chosen(&durable, &pending, &mut |_| rng.below(2) == 1).1);
    }
    // Every draw is consistent by construction; the model's own check agrees.
    debug_assert!(out.iter().all(|s| fs.directory_after(s).is_ok()));
    out.into_iter().collect()
}

/// Every subset of `0..n`, fewest members first.
fn every_subset(n: usize) -> Vec<Vec<usize>> {
    let mut masks: Vec<u32> = (0..1u32 << n).collect();
    masks.sort_by_key(|m| (m.count_ones(), *m));
    masks
        .into_iter()
        .map(|m| (0..n).filter(|i| m >> i & 1 == 1).collect())
        .collect()
}

fn sample_data(units: &[(FileId, u64)], budget: usize, rng: &mut SimRng) -> Vec<Vec<usize>> {
    let n = units.len();
    let mut out: BTreeSet<Vec<usize>> = BTreeSet::new();
    out.insert(Vec::new());
    out.insert((0..n).collect());
    let files: BTreeSet<FileId> = units.iter().map(|u| u.0).collect();
    for f in &files {
        out.insert((0..n).filter(|&i| units[i].0 == *f).collect());
        out.insert((0..n).filter(|&i| units[i].0 != *f).collect());
    }
    let mut tries = 0;
    while out.len() < budget && tries < 4 * budget {
        tries += 1;
        out.insert((0..n).filter(|_| rng.below(2) == 1).collect());
    }
    let mut v: Vec<Vec<usize>> = out.into_iter().collect();
    v.sort_by_key(Vec::len);
    v
}
