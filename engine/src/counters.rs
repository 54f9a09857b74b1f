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
    /// Freelist `allocate` calls and the ids or spans they examined.
    pub freelist_allocate_calls: u64,
    pub freelist_scan_steps: u64,
    /// Free ids (array) or span index entries (hashmap) moved to keep the free set ordered.
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
        let Counters {
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
        } = *other;
        self.commits += commits;
        self.rollbacks += rollbacks;
        self.syncs += syncs;
        self.write_calls += write_calls;
        self.pages_written += pages_written;
        self.bytes_written += bytes_written;
        self.meta_writes += meta_writes;
        self.file_growths += file_growths;
        self.pages_read += pages_read;
        self.bytes_read += bytes_read;
        self.page_cache_hits += page_cache_hits;
        self.freelist_pages_written += freelist_pages_written;
        self.freelist_bytes_written += freelist_bytes_written;
        self.freelist_allocate_calls += freelist_allocate_calls;
        self.freelist_scan_steps += freelist_scan_steps;
        self.freelist_ids_moved += freelist_ids_moved;
        self.high_water_allocations += high_water_allocations;
        self.rebuild_pages_visited += rebuild_pages_visited;
        self.node_splits += node_splits;
        self.node_merges += node_merges;
        self.batches += batches;
        self.batched_calls += batched_calls;
        self.batch_solo_retries += batch_solo_retries;
        self.merge_bytes_copied += merge_bytes_copied;
        self.merge_records_decoded += merge_records_decoded;
        self.merge_records_encoded += merge_records_encoded;
        self.buffer_allocations += buffer_allocations;
        self.buffer_reallocations += buffer_reallocations;
        self.buffer_bytes_copied_by_growth += buffer_bytes_copied_by_growth;
        self.size_computation_steps += size_computation_steps;
        self.buffer_bytes_reserved += buffer_bytes_reserved;
        self.write_calls_saved += write_calls_saved;
    }
}
