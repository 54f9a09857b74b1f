//! The checker's worker threads (`check --jobs N`) and the recoveries they made ahead of the
//! walk: `prefetch.rs` fills them, `explore.rs` takes from them.

use crate::image::ImageId;
use crate::recover::Recovery;
use std::collections::BTreeMap;

/// The worker threads, and recoveries made ahead of the walk.
pub(crate) struct Prefetch {
    pub(crate) pool: Option<rayon::ThreadPool>,
    pub(crate) ready: BTreeMap<ImageId, Recovery>,
}

impl Prefetch {
    /// `jobs` threads; none for one job (or when no thread can be had: the walk then recovers
    /// every image itself, with the same results).
    pub fn new(jobs: usize) -> Prefetch {
        let pool = (jobs > 1)
            .then(|| {
                rayon::ThreadPoolBuilder::new()
                    .num_threads(jobs)
                    .thread_name(|i| format!("check-{i}"))
                    .build()
                    .ok()
            })
            .flatten();
        Prefetch {
            pool,
            ready: BTreeMap::new(),
        }
    }

    /// The recovery of `id`, if it was made ahead.
    pub fn take(&mut self, id: ImageId) -> Option<Recovery> {
        self.ready.remove(&id)
    }
}
