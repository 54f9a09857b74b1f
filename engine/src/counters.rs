//! Deterministic cost counters.
//!
//! Every figure is a plain count of work done, a function of the workload and the options only:
//! two runs of the same workload give the same numbers on any machine. Wall time is never a
//! counter.

use crate::presize::BufferWork;
use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Counters {
    /// Write transactions committed.
    pub commits: u64,
    /// Write transactions rolled back (explicitly, or by a failed commit).
    pub rollbacks: u64,
    /// `Storage::sync` calls.
    pub syncs: u64,
    /// `Storage::write_at` calls (a run of contiguous dirty pages is one call).
    pub write_calls: u64,
    /// Pages written, meta pages included.
    pub pages_written: u64,
    pub bytes_written: u64,
    /// Meta pages written.
    pub meta_writes: u64,
    /// File growths (`set_len` followed by a sync).
    pub file_growths: u64,
    /// Page reads that went to storage (cache misses), and the bytes they read.
    pub pages_read: u64,
    pub bytes_read: u64,
    /// Page lookups served from the page cache.
    pub page_cache_hits: u64,
    /// Freelist pages (counting overflow pages) and bytes written.
    pub freelist_pages_written: u64,
    pub freelist_bytes_written: u64,
    /// Freelist `allocate` calls and the runs (array) or size buckets (hashmap) they examined.
    pub freelist_allocate_calls: u64,
    pub freelist_scan_steps: u64,
    /// Run entries (array) or span index entries (hashmap) moved to keep the free set ordered.
    pub freelist_ids_moved: u64,
    /// Pages allocated at the high-water mark because the freelist had no fitting run.
    pub high_water_allocations: u64,
    /// Pages visited while rebuilding the freelist on open (no-freelist-sync).
    pub rebuild_pages_visited: u64,
    /// Nodes split at spill, and nodes merged by rebalance.
    pub node_splits: u64,
    pub node_merges: u64,
    /// Batches run by `Db::batch`/`Db::write`, the calls they carried (a retried call counts
    /// again), and calls sent to run alone after their function failed.
    pub batches: u64,
    pub batched_calls: u64,
    pub batch_solo_retries: u64,
    /// Bytes copied, records decoded and records re-encoded by merging write batches.
    pub merge_bytes_copied: u64,
    pub merge_records_decoded: u64,
    pub merge_records_encoded: u64,
    /// Buffers that grow with the work (write batches handed to `Db::write`, merged batches,
    /// the commit's page buffer, the freelist page): first allocations, growths, the bytes
    /// growth moved, and the items an `Exact` sizing pass examined (see `presize.rs`).
    pub buffer_allocations: u64,
    pub buffer_reallocations: u64,
    pub buffer_bytes_copied_by_growth: u64,
    pub size_computation_steps: u64,
    /// Bytes of every allocation those buffers made, growths included (Go's B/op for them).
    pub buffer_bytes_reserved: u64,
    /// `write_at` calls avoided by writing each run of contiguous dirty pages with one call.
    pub write_calls_saved: u64,
    /// Bytes zeroed for the commit's node, meta and (short) freelist page images (`arena.rs`):
    /// only what an image leaves of a longer one placed in the same buffer before, and the
    /// buffers' growth. (Each node and meta image once came in a run zeroed in full, and the
    /// freelist page in the commit buffer was zeroed in full too, uncounted.)
    pub image_bytes_zeroed: u64,
    /// Where the format changes shape (see [`shape`]): freelist pages written with the 0xFFFF
    /// count escape, freelist pages of at least [`shape::FREELIST_LONG_PAGES`] pages, node page
    /// runs (a value's overflow chain) of at least [`shape::OVERFLOW_LONG_PAGES`] pages, bucket
    /// trees written with at least [`shape::TREE_DEEP_LEVELS`] levels, and file growths to a
    /// length past [`shape::GROWTH_STEP`] (where growth stops doubling).
    pub freelist_escaped_writes: u64,
    pub freelist_long_writes: u64,
    pub overflow_long_writes: u64,
    pub deep_tree_writes: u64,
    pub step_growths: u64,
}

/// The sizes at which the format changes shape, counted by the `*_writes` counters above, so a
/// simulation can report that its workload reached them. Each is a count the engine already
/// has in hand where it writes, so counting costs a comparison.
pub mod shape {
    /// A freelist page holding this many ids or more stores its count in the first element
    /// (bbolt's escape: the header's 16-bit count field then reads 0xFFFF).
    pub const FREELIST_ESCAPE_IDS: u64 = 0xFFFF;
    /// A freelist page spanning this many pages or more is "long".
    pub const FREELIST_LONG_PAGES: u64 = 64;
    /// A node written over this many pages or more (a value's overflow chain) is "long".
    pub const OVERFLOW_LONG_PAGES: u64 = 64;
    /// A bucket tree of this many levels or more (root, two branch levels, leaves) is "deep".
    pub const TREE_DEEP_LEVELS: u64 = 4;
    /// The file grows to the next power of two up to this length, then in steps of it.
    pub const GROWTH_STEP: u64 = 16 << 20;
}

/// Calls `$apply!(field, ...)` with every field of [`Counters`]; the callers destructure
/// `Counters` with the list, so a field missing here fails to compile.
macro_rules! every_counter {
    ($apply:ident) => {
        $apply!(
            commits,
            rollbacks,
            syncs,
            write_calls,
            pages_written,
            bytes_written,
            meta_writes,
            file_growths,
            pages_read,
            bytes_read,
            page_cache_hits,
            freelist_pages_written,
            freelist_bytes_written,
            freelist_allocate_calls,
            freelist_scan_steps,
            freelist_ids_moved,
            high_water_allocations,
            rebuild_pages_visited,
            node_splits,
            node_merges,
            batches,
            batched_calls,
            batch_solo_retries,
            merge_bytes_copied,
            merge_records_decoded,
            merge_records_encoded,
            buffer_allocations,
            buffer_reallocations,
            buffer_bytes_copied_by_growth,
            size_computation_steps,
            buffer_bytes_reserved,
            write_calls_saved,
            image_bytes_zeroed,
            freelist_escaped_writes,
            freelist_long_writes,
            overflow_long_writes,
            deep_tree_writes,
            step_growths,
        )
    };
}

impl Counters {
    /// Add a buffer's work to the buffer counters.
    pub fn add_buffer_work(&mut self, work: &BufferWork) {
        let BufferWork {
            allocations,
            reallocations,
            bytes_copied_by_growth,
            size_computation_steps,
            bytes_reserved,
        } = *work;
        self.buffer_allocations += allocations;
        self.buffer_reallocations += reallocations;
        self.buffer_bytes_copied_by_growth += bytes_copied_by_growth;
        self.size_computation_steps += size_computation_steps;
        self.buffer_bytes_reserved += bytes_reserved;
    }

    /// Add every field of `other` (e.g. to total the counters of several opens of one file).
    pub fn accumulate(&mut self, other: &Counters) {
        let this = self;
        macro_rules! add {
            ($($field:ident),* $(,)?) => {{
                let Counters { $($field),* } = *other;
                $(this.$field += $field;)*
            }};
        }
        every_counter!(add);
    }

    /// The work done since `earlier`, a snapshot of the same counters: every field of `self`
    /// less `earlier`'s. Panics (in debug builds) if `earlier` is not earlier.
    pub fn since(&self, earlier: &Counters) -> Counters {
        let mut out = *self;
        macro_rules! sub {
            ($($field:ident),* $(,)?) => {{
                let Counters { $($field),* } = *earlier;
                $(out.$field -= $field;)*
            }};
        }
        every_counter!(sub);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::Counters;

    #[test]
    fn since_undoes_accumulate_field_by_field() {
        let earlier = Counters {
            commits: 3,
            write_calls_saved: 7,
            ..Counters::default()
        };
        let work = Counters {
            commits: 2,
            syncs: 4,
            buffer_bytes_reserved: 9,
            write_calls_saved: 1,
            ..Counters::default()
        };
        let mut later = earlier;
        later.accumulate(&work);
        assert_eq!(later.commits, 5);
        assert_eq!(later.write_calls_saved, 8);
        assert_eq!(later.since(&earlier), work);
        assert_eq!(later.since(&later), Counters::default());
    }
}
