//! Database options.

use crate::batch::MergeStrategy;
use crate::error::{Error, Result};
use crate::freelist::FreelistKind;
use crate::presize::PresizePolicy;
use crashlab_format::meta::ChecksumRule;
use crashlab_format::page;
use std::time::Duration;

/// How a database is opened. Every field is part of a simulation's recorded configuration, so
/// each is plain data.
#[derive(Clone, Debug, PartialEq)]
pub struct Options {
    /// Page size for a new file (an existing file's own page size wins). Power of two in
    /// [512, 65536].
    pub page_size: u32,
    /// How full a node is packed when it splits, in [0.1, 1.0] (bbolt's FillPercent).
    pub fill_percent: f64,
    /// Skip every sync. Fast, and a power cut may lose or corrupt anything since the last
    /// sync; a process crash loses nothing.
    pub no_sync: bool,
    /// Do not write the freelist at commit; rebuild it on open by walking every bucket.
    pub no_freelist_sync: bool,
    /// Free-set implementation.
    pub freelist: FreelistKind,
    /// Decoded pages kept in memory, shared by all transactions.
    pub page_cache_pages: usize,
    /// Open without ever writing: write transactions are refused.
    pub read_only: bool,
    /// Most calls `Db::batch`/`Db::write` put in one transaction (bbolt: 1000).
    pub max_batch_size: usize,
    /// How long the first caller of a batch waits for others to join (bbolt: 10 ms).
    pub max_batch_delay: Duration,
    /// How concurrent `Db::write` batches are merged.
    pub merge_strategy: MergeStrategy,
    /// How the buffers that grow with the work are sized: merged write batches, the commit's
    /// page write buffer and the freelist page.
    pub presize: PresizePolicy,
    /// Deliberate bugs for crashlab's negative controls. Every flag is off by default and no
    /// user has a reason to turn one on: they exist so the crash-state checker can prove it sees
    /// each bug. Only with the `debug-hooks` feature (the simulator's crates enable it); without
    /// it every hook is off and compiled out.
    #[cfg(feature = "debug-hooks")]
    pub debug: DebugHooks,
}

/// Deliberate bugs, each off unless a negative-control test turns it on (see
/// `crashlab check --control`). Each names the protection it removes. Reachable only with the
/// `debug-hooks` feature.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DebugHooks {
    /// Write every commit's meta to slot 0 instead of slot `txid % 2`: a torn meta write then
    /// destroys the only valid meta.
    pub meta_same_slot: bool,
    /// Accept a meta page whose checksum does not match: a torn meta is trusted.
    pub skip_meta_checksum: bool,
    /// Release pending pages as if no reader were open: a page a reader's snapshot still
    /// references can be reused and overwritten.
    pub reuse_pages_under_readers: bool,
    /// When a call of a batch fails, keep the transaction instead of rolling it back: the
    /// failed call's writes are committed with its siblings' (who then run again).
    pub batch_keeps_failed_call: bool,
    /// Do not latch after a failed commit: the next write transaction on the same handle builds
    /// on a freelist that may already hold the failed commit's allocations, and on pages the
    /// disk may or may not hold.
    pub no_latch: bool,
    /// A cursor stepping back into the previous leaf skips that leaf's last key: reverse
    /// iteration loses a key at every leaf boundary it crosses (forward iteration is right).
    pub prev_skips_leaf_end: bool,
    /// A commit forgets the pages it frees: they are neither reachable nor free, a leak that a
    /// freelist rebuilt on the next open (`no_freelist_sync`) heals.
    pub leak_freed_pages: bool,
    /// Deleting a bucket whose root leaf was emptied earlier in the same transaction (its last
    /// key or sub-bucket deleted) forgets to free that root's pages, as if it were a new inline
    /// bucket's: they leak.
    pub emptied_bucket_leaks: bool,
    /// A batch commit that holds a single call (a caller no other joined) writes its meta
    /// without the sync between its data pages and its meta, as if a lone small call were not
    /// worth two syncs: a power cut can leave a meta that points at pages the disk never got.
    /// Only a schedule that commits a call of a group alone shows it.
    pub lone_call_skips_data_sync: bool,
    /// The commit frees the first span it frees a second time: the engine's own
    /// double free, which it must report as a broken invariant, not as a damaged file.
    pub double_free_in_commit: bool,
    /// The commit of this transaction id panics (0: never): a stand-in for any engine panic,
    /// which every driver must report as a violation with a case, never crash on.
    pub panic_in_commit_txid: u64,
    /// A freelist page of 0xFFFF ids or more is written without the count escape: its 16-bit
    /// count field holds the count truncated, so the next open reads only the ids that fit
    /// and every other free page leaks (a file too small for 0xFFFF free ids never shows it).
    pub freelist_count_wraps: bool,
    /// After spilling, the commit frees a page that a branch it writes still references (the
    /// first child of the first such branch that this commit does not rewrite), as a rebalance
    /// that freed the wrong child would: the commit's reference check must refuse it before
    /// anything is written, or the page would be handed out again while the tree points at it.
    pub free_referenced_child: bool,
    /// The `Rebuild` merge of a run of write calls leaves out the last call's records, while
    /// that caller is told its call committed. Only a group that merges two or more write calls
    /// under `MergeStrategy::Rebuild` shows it: `Append` and a call applied alone are right.
    pub rebuild_drops_last_call: bool,
    /// A Get finds its key in the leaf by comparing only the first 16 bytes of each key, as a
    /// search on a fixed-size key buffer would: a Get of a key that shares its first 16 bytes
    /// with another key of the same leaf can answer with that key's value (or none). Keys of
    /// 16 bytes or fewer, and keys that differ within them, are found right.
    pub get_compares_16_bytes: bool,
    /// A batch that holds `max_batch_size` calls runs all but its last, and that caller is
    /// told its call committed, as an off-by-one in a fixed-size table of a batch's calls
    /// would: only a batch that reaches the limit shows it.
    pub full_batch_drops_last_call: bool,
    /// The coalescer takes one call more than `max_batch_size` into a batch when that many
    /// wait: every call is still committed once and told so, but a batch holds more calls
    /// than the limit promises.
    pub batch_exceeds_limit: bool,
    /// A small bucket is stored inline even when it holds sub-buckets, against bbolt's rule: the
    /// engine reads such a file back, but bbolt's rebuild of the free pages does not look
    /// inside inline buckets, so it would hand out the pages of a sub-bucket kept in one. Only
    /// `check` tells the file from a conforming one.
    pub inline_keeps_sub_buckets: bool,
    /// A commit that rewrites a branch of several pages frees only its first page, as code
    /// that thinks of overflow as a leaf's (a large value) would: the rest leak. Only a branch
    /// whose separators outgrow a page, which takes keys of hundreds of bytes, shows it.
    pub branch_frees_first_page: bool,
    /// The meta's checksum leaves out its txid, on write and on open alike: a meta whose txid
    /// alone is damaged still passes, and a txid raised past the other slot's makes open take
    /// the older commit (or a tree since overwritten). Every file this engine writes opens
    /// under it, so no check of a file's contents sees it; only damage to a meta's txid does.
    pub meta_checksum_skips_txid: bool,
    /// Setting or bumping a bucket's sequence does not mark the bucket dirty, as if the
    /// sequence were a field of the handle rather than of the stored bucket: a transaction that
    /// changes a sequence and nothing else in that bucket commits without it. One that also
    /// puts to the bucket (which marks it dirty) keeps it.
    pub sequence_skips_dirty: bool,
    /// A rebalance that merges a branch into its left sibling keeps the right branch's own
    /// first separator (regression 018 put back). That separator bounds nothing where it
    /// stands and may exceed keys under it; in the merged branch it becomes a lower bound, and
    /// the commit's order check refuses a valid commit. Only a tree of three levels or more
    /// whose branch merges in a commit that also puts below that separator shows it.
    pub merge_keeps_branch_separator: bool,
    /// A bucket is stored inline while its page image fits in half a page, where bbolt's rule
    /// is a quarter: a threshold computed wrong. Nothing is lost and every reader still reads
    /// it, so only a check of the format's rule (`check()`, inline buckets) shows it.
    pub inline_up_to_half_page: bool,
    /// Every commit's meta records the page size in 16 bits, as a header field sized for the
    /// common pages would: 65,536 becomes 0, and the next open finds that meta invalid. Files
    /// of smaller pages are unchanged, so only a run on 64 KiB pages shows it.
    pub page_size_16_bits: bool,
    /// Only a commit that failed with an I/O error latches; one refused for damage it found or
    /// an invariant it broke lets the handle go on writing, with its in-memory free set as the
    /// refused commit left it (pages of the tree still on disk pending release). The sweeps
    /// end a run at a refusal, so only the latch check made there shows it.
    pub refusal_does_not_latch: bool,
    /// A cursor stepping forward stops at an empty leaf instead of going on to the next one, so
    /// a scan inside a transaction that emptied a leaf (its rebalance waits for the commit) ends
    /// early. Committed trees have no empty leaves, so only such a scan shows it.
    pub empty_leaf_ends_scan: bool,
    /// A plain put over a sub-bucket's key is taken, not refused as an incompatible value: the
    /// value replaces the bucket's header and the item keeps its bucket flag. Only a put that
    /// names a sub-bucket shows it.
    pub put_over_bucket: bool,
    /// Deleting a bucket opened in the same transaction frees the pages of its tree but not those
    /// of the sub-buckets stored in a leaf the transaction edited (those it did not open): they
    /// leak. Only a bucket deleted after a write into it, with sub-buckets below, shows it.
    pub delete_leaks_sub_buckets: bool,
    /// A delete of a key its bucket does not hold answers that the key was there, as code that
    /// reports the bucket's existence instead of the key's would. Nothing on disk changes, so
    /// only a caller that compares the answer shows it.
    pub delete_answers_existed: bool,
    /// A cursor stepping back stops at an empty leaf instead of going on to the one before, so a
    /// reverse read inside a transaction that emptied a leaf ends early (forward steps are
    /// right). Committed trees have no empty leaves, so only such a read shows it.
    pub empty_leaf_ends_reverse_scan: bool,
    /// A key or bucket name of exactly `MAX_KEY_SIZE` bytes is refused as too large, as a
    /// length check written `>=` for `>` would: the limit is one byte short. Only a key at the
    /// limit shows it; the keys the workloads draw are at most a tenth of it.
    pub key_limit_one_short: bool,
    /// The commit that drops a persisted freelist (`no_freelist_sync` on a file that has one)
    /// frees only the first page of the old list: the others leak until an open rebuilds the
    /// free set. A new file's list is one page (every `no_freelist_sync` run drops it at its
    /// first commit), so only a file whose list grew past a page, then reopened with the setting
    /// switched on, shows it.
    pub dropped_freelist_frees_first_page: bool,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            page_size: 4096,
            fill_percent: 0.5,
            no_sync: false,
            no_freelist_sync: false,
            freelist: FreelistKind::Array,
            page_cache_pages: 16 * 1024,
            read_only: false,
            max_batch_size: 1000,
            max_batch_delay: Duration::from_millis(10),
            merge_strategy: MergeStrategy::Append,
            presize: PresizePolicy::Estimate,
            #[cfg(feature = "debug-hooks")]
            debug: DebugHooks::default(),
        }
    }
}

impl Options {
    /// The negative controls in force: all off without the `debug-hooks` feature, so the checks
    /// of them fold away.
    #[inline]
    pub(crate) fn hooks(&self) -> DebugHooks {
        #[cfg(feature = "debug-hooks")]
        return self.debug;
        #[cfg(not(feature = "debug-hooks"))]
        return DebugHooks::default();
    }

    /// How this engine makes and checks a meta's checksum: the format's rule unless a negative
    /// control breaks it.
    pub(crate) fn checksum_rule(&self) -> ChecksumRule {
        let hooks = self.hooks();
        if hooks.skip_meta_checksum {
            ChecksumRule::Unverified
        } else if hooks.meta_checksum_skips_txid {
            ChecksumRule::SkipsTxid
        } else {
            ChecksumRule::Format
        }
    }

    pub(crate) fn validate(&self) -> Result<()> {
        if !page::page_size_valid(self.page_size) {
            return Err(Error::InvalidOptions(format!(
                "page size {} is not a power of two in [{}, {}]",
                self.page_size,
                page::PAGE_SIZE_MIN,
                page::PAGE_SIZE_MAX
            )));
        }
        if !(0.1..=1.0).contains(&self.fill_percent) {
            return Err(Error::InvalidOptions(format!(
                "fill percent {} outside [0.1, 1.0]",
                self.fill_percent
            )));
        }
        Ok(())
    }
}
