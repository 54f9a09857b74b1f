//! `check --jobs N`: the distinct crash images of a run of crash points recovered on N threads
//! ahead of the walk that judges them.
//!
//! Opening an image (recovery: open, read whole, read back, `check()`) is where a check spends
//! its time, and it is a pure function of the image's bytes, the engine's options and the book
//! of states. So before the sequential walk of [`Explorer`] visits a batch of crash points, the
//! batch's states are enumerated as the walk will enumerate them (the same plan, the same
//! per-point sample), the images not yet known are deduplicated by identity, and the worker
//! threads recover them. The walk then finds each recovery ready instead of computing it; the
//! order in which it meets images — and so which are fresh, which are re-crashed, every count
//! and every finding — is the walk's own, the same for any number of threads. A batch the walk
//! does not finish (it stopped at a violation) only leaves unused recoveries behind.

use crate::explore::{positions, sample_rng, Explorer};
use crate::image::{build, ImageId};
use crate::record::CrashPoint;
use crate::recover::{recover, Recovery};
use crate::states;
use crashlab_sim::adapter::Engine;
use rayon::prelude::*;
use std::collections::BTreeSet;

/// Distinct images a batch gathers per worker before it is recovered: enough that the workers
/// rarely wait at the batch's end, few enough that the batch's recipes stay small.
const BATCH_IMAGES_PER_JOB: usize = 128;

/// An image to recover: its identity, and how to build it from a crash point of the batch.
struct Recipe {
    id: ImageId,
    point: usize,
    /// Positions of the pending sectors kept, or `None` for what reads see (a process crash).
    kept: Option<Vec<u32>>,
}

impl<E: Engine> Explorer<'_, E> {
    /// Recover ahead the images of a batch of `points` from `from` on (`max` states per crash
    /// point; `first`: the recorded run's points, whose process crash is judged too); the end of
    /// the batch. Without worker threads the batch is every point and nothing is done.
    pub fn prefetch_from(&mut self, points: &[CrashPoint], from: usize, max: u64) -> usize {
        self.prefetch_batch(points, from, max, true)
    }

    /// Recover ahead every power-cut image of a recovery's crash points.
    pub fn prefetch_recovery(&mut self, points: &[CrashPoint], max: u64) {
        let mut from = 0;
        while from < points.len() {
            from = self.prefetch_batch(points, from, max, false);
        }
    }

    fn prefetch_batch(
        &mut self,
        points: &[CrashPoint],
        from: usize,
        max: u64,
        first: bool,
    ) -> usize {
        let Some(jobs) = self.prefetch.pool.as_ref().map(|p| p.current_num_threads()) else {
            return points.len();
        };
        let mut recipes = Vec::new();
        let mut known = BTreeSet::new();
        let mut end = from;
        while end < points.len() && recipes.len() < jobs * BATCH_IMAGES_PER_JOB {
            self.recipes(&points[end], end, max, first, &mut known, &mut recipes);
            end += 1;
        }
        let ss = self.sector_size();
        let (engine, book) = (&self.engine, &self.book);
        let Some(pool) = &self.prefetch.pool else {
            unreachable!("checked above")
        };
        let recovered: Vec<(ImageId, Recovery)> = pool.install(|| {
            recipes
                .par_iter()
                .with_max_len(1)
                .map(|r| {
                    let p = &points[r.point];
                    let image = match &r.kept {
                        Some(kept) => {
                            build(&p.durable, kept.iter().map(|&i| &p.pending[i as usize]), ss)
                        }
                        None => p.current.to_vec(),
                    };
                    (r.id, recover::<E>(image, engine, book))
                })
                .collect()
        });
        self.prefetch.ready.extend(recovered);
        end
    }

    /// The images of crash point `p` (index `at` in the batch) that the walk will open and that
    /// no one has recovered yet.
    fn recipes(
        &self,
        p: &CrashPoint,
        at: usize,
        max: u64,
        first: bool,
        known: &mut BTreeSet<ImageId>,
        out: &mut Vec<Recipe>,
    ) {
        let mut fresh = |id: ImageId| {
            !self.cache.contains_key(&id)
                && !self.prefetch.ready.contains_key(&id)
                && known.insert(id)
        };
        if first {
            let id = ImageId::of(&p.current, self.sector_size());
            if fresh(id) {
                out.push(Recipe {
                    id,
                    point: at,
                    kept: None,
                });
            }
        }
        let mut rng = sample_rng(self.cfg.seed, p.call);
        states::enumerate(
            &p.pending,
            self.sectors_per_page(),
            max,
            &mut rng,
            &mut |subset, d| {
                let id = p.durable.id ^ d;
                if fresh(id) {
                    let kept = positions(subset).map(|i| i as u32).collect();
                    out.push(Recipe {
                        id,
                        point: at,
                        kept: Some(kept),
                    });
                }
                true
            },
        );
    }
}
