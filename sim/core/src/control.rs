//! Negative controls: deliberate bugs the harness must find, each built as a storage wrapper (the
//! I/O is wrong, any engine) or an engine debug hook (the engine is wrong; an engine's
//! [`EngineConfig::with_control`](crate::adapter::EngineConfig::with_control) turns its hook on,
//! or says it has none). crashlab's hooks live in `Options::debug`, every flag off by default.
//!
//! | control | bug | built as |
//! |---|---|---|
//! | `no-barrier` (a) | no sync between a commit's data pages and its meta | `negative::NoBarrier` |
//! | `meta-same-slot` (b) | every commit's meta goes to the same slot | `DebugHooks::meta_same_slot` |
//! | `meta-unchecked` (c) | a meta's checksum is not verified on open | `DebugHooks::skip_meta_checksum` |
//! | `no-growth-sync` (d) | file growth not made durable before use | an `own-barrier` disk behind `negative::DropGrowthSync`, which drops the sync that follows a growing `set_len` |
//! | `reuse-under-readers` (e) | a freed page reused while a reader's snapshot references it | `DebugHooks::reuse_pages_under_readers` |
//! | `batch-keeps-failed-call` (f) | a batch whose call failed is committed instead of rolled back | `DebugHooks::batch_keeps_failed_call` |
//! | `no-latch` (g) | a failed commit does not latch: the same handle keeps writing | `DebugHooks::no_latch` |
//! | `prev-skips-leaf-end` (h) | a cursor stepping back into a leaf skips its last key | `DebugHooks::prev_skips_leaf_end` |
//! | `leak-freed-pages` (i) | a commit forgets the pages it frees (a rebuilt freelist heals it) | `DebugHooks::leak_freed_pages` |
//! | `emptied-bucket-leak` (j) | deleting a bucket emptied earlier in the same transaction leaks its pages | `DebugHooks::emptied_bucket_leaks` |
//! | `double-free-in-commit` (k) | a commit frees a span twice in its own bookkeeping | `DebugHooks::double_free_in_commit` |
//! | `panic-in-commit` (l) | the engine panics in the commit of txid [`PANIC_IN_COMMIT_TXID`] | `DebugHooks::panic_in_commit_txid` |
//! | `lone-call-skips-data-sync` (m) | a batch commit of a single call writes its meta without syncing its data first | `DebugHooks::lone_call_skips_data_sync` |
//! | `freelist-count-wraps` (n) | a freelist of 0xFFFF ids or more is written without the count escape (its count truncated to 16 bits) | `DebugHooks::freelist_count_wraps` |
//! | `rebuild-drops-last-call` (o) | the `Rebuild` merge of a group's write calls leaves out the last call's records | `DebugHooks::rebuild_drops_last_call` |
//! | `get-compares-16-bytes` (p) | a Get compares only the first 16 bytes of the keys in its leaf | `DebugHooks::get_compares_16_bytes` |
//! | `full-batch-drops-last-call` (q) | a batch that reaches the batch limit runs all its calls but the last | `DebugHooks::full_batch_drops_last_call` |
//! | `batch-exceeds-limit` (r) | the coalescer takes one call more than the batch limit into a batch | `DebugHooks::batch_exceeds_limit` |
//! | `inline-keeps-sub-buckets` (s) | a small bucket holding sub-buckets is stored inline, which bbolt's rebuild of its free pages does not look inside | `DebugHooks::inline_keeps_sub_buckets` |
//! | `branch-frees-first-page` (t) | a rewritten branch of several pages frees only its first page (the rest leak) | `DebugHooks::branch_frees_first_page` |
//! | `meta-checksum-skips-txid` (u) | a meta's checksum leaves out its txid, on write and on open | `DebugHooks::meta_checksum_skips_txid` |
//! | `sequence-skips-dirty` (v) | setting a bucket's sequence does not mark the bucket dirty | `DebugHooks::sequence_skips_dirty` |
//! | `merge-keeps-branch-separator` (w) | a branch merged into its left sibling keeps its own first separator, which may exceed keys under it (regression 018) | `DebugHooks::merge_keeps_branch_separator` |
//! | `inline-up-to-half-page` (x) | a bucket is stored inline while it fits in half a page (bbolt: a quarter) | `DebugHooks::inline_up_to_half_page` |
//! | `page-size-16-bits` (y) | every commit's meta records the page size in 16 bits (65,536 becomes 0) | `DebugHooks::page_size_16_bits` |
//! | `refusal-does-not-latch` (z) | only a commit failed by I/O latches: one refused for damage it found lets the handle write on | `DebugHooks::refusal_does_not_latch` |
//! | `empty-leaf-ends-scan` (aa) | a cursor stepping forward stops at a leaf emptied in its transaction | `DebugHooks::empty_leaf_ends_scan` |
//! | `put-over-bucket` (ab) | a plain put over a sub-bucket's key replaces its header instead of being refused | `DebugHooks::put_over_bucket` |
//! | `delete-leaks-sub-buckets` (ac) | deleting a bucket written in the same transaction leaks the sub-buckets stored in its edited leaves | `DebugHooks::delete_leaks_sub_buckets` |
//! | `delete-answers-existed` (ad) | a delete of an absent key answers that the key was there | `DebugHooks::delete_answers_existed` |
//! | `empty-leaf-ends-reverse-scan` (ae) | a cursor stepping back stops at a leaf emptied in its transaction | `DebugHooks::empty_leaf_ends_reverse_scan` |
//! | `key-limit-one-short` (af) | a key or bucket name of exactly the size limit is refused | `DebugHooks::key_limit_one_short` |
//! | `dropped-freelist-frees-first-page` (ag) | the commit that drops a persisted freelist frees only its first page | `DebugHooks::dropped_freelist_frees_first_page` |
//!
//! `fdatasync-disk` is no bug: it is (d)'s disk, the `own-barrier` length model of `SimDisk`
//! (growth is durable only through the sync that directly follows the growing `set_len`), with
//! nothing in front, on which a correct engine must pass — the twin that shows (d) is found
//! because of the bug. Every sweep and check also draws that disk for half its seeds; the two
//! names survive so that (d) and its twin can be asked for by name.

use crate::disk::{LengthModel, SimDisk};
use crate::negative::{DropGrowthSync, NoBarrier};
use crashlab_engine::Storage;
use std::fmt;
use std::str::FromStr;

/// The commit control (l) makes panic: txid 3, the second commit after creation (which writes
/// txids 0 and 1), so a run has committed once and reopens or cuts the power after it.
pub const PANIC_IN_COMMIT_TXID: u64 = 3;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Control {
    #[default]
    None,
    NoBarrier,
    MetaSameSlot,
    MetaUnchecked,
    NoGrowthSync,
    ReuseUnderReaders,
    BatchKeepsFailedCall,
    NoLatch,
    PrevSkipsLeafEnd,
    LeakFreedPages,
    EmptiedBucketLeak,
    DoubleFreeInCommit,
    PanicInCommit,
    LoneCallSkipsDataSync,
    FreelistCountWraps,
    RebuildDropsLastCall,
    GetCompares16Bytes,
    FullBatchDropsLastCall,
    BatchExceedsLimit,
    InlineKeepsSubBuckets,
    BranchFreesFirstPage,
    MetaChecksumSkipsTxid,
    SequenceSkipsDirty,
    MergeKeepsBranchSeparator,
    InlineUpToHalfPage,
    PageSize16Bits,
    RefusalDoesNotLatch,
    EmptyLeafEndsScan,
    PutOverBucket,
    DeleteLeaksSubBuckets,
    DeleteAnswersExisted,
    EmptyLeafEndsReverseScan,
    KeyLimitOneShort,
    DroppedFreelistFreesFirstPage,
    FdatasyncDisk,
}

impl Control {
    pub const ALL: [Control; 35] = [
        Control::None,
        Control::NoBarrier,
        Control::MetaSameSlot,
        Control::MetaUnchecked,
        Control::NoGrowthSync,
        Control::ReuseUnderReaders,
        Control::BatchKeepsFailedCall,
        Control::NoLatch,
        Control::PrevSkipsLeafEnd,
        Control::LeakFreedPages,
        Control::EmptiedBucketLeak,
        Control::DoubleFreeInCommit,
        Control::PanicInCommit,
        Control::LoneCallSkipsDataSync,
        Control::FreelistCountWraps,
        Control::RebuildDropsLastCall,
        Control::GetCompares16Bytes,
        Control::FullBatchDropsLastCall,
        Control::BatchExceedsLimit,
        Control::InlineKeepsSubBuckets,
        Control::BranchFreesFirstPage,
        Control::MetaChecksumSkipsTxid,
        Control::SequenceSkipsDirty,
        Control::MergeKeepsBranchSeparator,
        Control::InlineUpToHalfPage,
        Control::PageSize16Bits,
        Control::RefusalDoesNotLatch,
        Control::EmptyLeafEndsScan,
        Control::PutOverBucket,
        Control::DeleteLeaksSubBuckets,
        Control::DeleteAnswersExisted,
        Control::EmptyLeafEndsReverseScan,
        Control::KeyLimitOneShort,
        Control::DroppedFreelistFreesFirstPage,
        Control::FdatasyncDisk,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Control::None => "none",
            Control::NoBarrier => "no-barrier",
            Control::MetaSameSlot => "meta-same-slot",
            Control::MetaUnchecked => "meta-unchecked",
            Control::NoGrowthSync => "no-growth-sync",
            Control::ReuseUnderReaders => "reuse-under-readers",
            Control::BatchKeepsFailedCall => "batch-keeps-failed-call",
            Control::NoLatch => "no-latch",
            Control::PrevSkipsLeafEnd => "prev-skips-leaf-end",
            Control::LeakFreedPages => "leak-freed-pages",
            Control::EmptiedBucketLeak => "emptied-bucket-leak",
            Control::DoubleFreeInCommit => "double-free-in-commit",
            Control::PanicInCommit => "panic-in-commit",
            Control::LoneCallSkipsDataSync => "lone-call-skips-data-sync",
            Control::FreelistCountWraps => "freelist-count-wraps",
            Control::RebuildDropsLastCall => "rebuild-drops-last-call",
            Control::GetCompares16Bytes => "get-compares-16-bytes",
            Control::FullBatchDropsLastCall => "full-batch-drops-last-call",
            Control::BatchExceedsLimit => "batch-exceeds-limit",
            Control::InlineKeepsSubBuckets => "inline-keeps-sub-buckets",
            Control::BranchFreesFirstPage => "branch-frees-first-page",
            Control::MetaChecksumSkipsTxid => "meta-checksum-skips-txid",
            Control::SequenceSkipsDirty => "sequence-skips-dirty",
            Control::MergeKeepsBranchSeparator => "merge-keeps-branch-separator",
            Control::InlineUpToHalfPage => "inline-up-to-half-page",
            Control::PageSize16Bits => "page-size-16-bits",
            Control::RefusalDoesNotLatch => "refusal-does-not-latch",
            Control::EmptyLeafEndsScan => "empty-leaf-ends-scan",
            Control::PutOverBucket => "put-over-bucket",
            Control::DeleteLeaksSubBuckets => "delete-leaks-sub-buckets",
            Control::DeleteAnswersExisted => "delete-answers-existed",
            Control::EmptyLeafEndsReverseScan => "empty-leaf-ends-reverse-scan",
            Control::KeyLimitOneShort => "key-limit-one-short",
            Control::DroppedFreelistFreesFirstPage => "dropped-freelist-frees-first-page",
            Control::FdatasyncDisk => "fdatasync-disk",
        }
    }

    /// Whether the control is a deliberate bug (violations are the expected result).
    pub fn is_bug(self) -> bool {
        !matches!(self, Control::None | Control::FdatasyncDisk)
    }

    /// Whether the control is built in the storage — a wrapper, or the disk's own model — so it
    /// applies to every engine.
    pub fn is_storage_wrapper(self) -> bool {
        matches!(
            self,
            Control::NoBarrier | Control::NoGrowthSync | Control::FdatasyncDisk
        )
    }

    /// The length model the control needs its disk to have, if it needs one: (d) and its twin
    /// are about a disk whose data sync does not persist growth.
    pub fn length_model(self) -> Option<LengthModel> {
        match self {
            Control::NoGrowthSync | Control::FdatasyncDisk => Some(LengthModel::OwnBarrier),
            _ => None,
        }
    }

    /// The control's storage over `disk` for one run. `meta_len`: the bytes at the start of the
    /// file that hold the engine's meta (control (a) keeps their syncs). A control with a
    /// [`Control::length_model`] asserts that the disk has it.
    pub fn for_run(self, disk: &SimDisk, meta_len: u64) -> ControlStorage {
        if let Some(needed) = self.length_model() {
            let has = disk.config().length;
            assert_eq!(
                has, needed,
                "control {self} runs on an {needed} disk, not {has}"
            );
        }
        let disk = disk.clone();
        match self {
            Control::NoBarrier => ControlStorage::NoBarrier { disk, meta_len },
            Control::NoGrowthSync => ControlStorage::DropGrowthSync(disk),
            _ => ControlStorage::Plain(disk),
        }
    }

    /// `storage` behind this control's wrapper, if it has one: for storage that is not a bare
    /// [`SimDisk`] (a SimFs file). `meta_len` as for [`Control::for_run`]; the caller checks the
    /// [`Control::length_model`].
    pub fn wrap<S: Storage + 'static>(self, storage: S, meta_len: u64) -> Box<dyn Storage> {
        match self {
            Control::NoBarrier => Box::new(NoBarrier::with_meta_len(storage, meta_len)),
            Control::NoGrowthSync => Box::new(DropGrowthSync::new(storage)),
            _ => Box::new(storage),
        }
    }
}

/// A control's storage for one run: the disk, or a wrapper over it (a fresh one per open: the
/// wrappers hold only what they saw of the calls of one open).
#[derive(Clone)]
pub enum ControlStorage {
    Plain(SimDisk),
    NoBarrier { disk: SimDisk, meta_len: u64 },
    DropGrowthSync(SimDisk),
}

impl ControlStorage {
    /// The storage one open of the engine gets.
    pub fn open(&self) -> Box<dyn Storage> {
        match self {
            ControlStorage::Plain(disk) => Box::new(disk.clone()),
            ControlStorage::NoBarrier { disk, meta_len } => {
                Box::new(NoBarrier::with_meta_len(disk.clone(), *meta_len))
            }
            ControlStorage::DropGrowthSync(disk) => Box::new(DropGrowthSync::new(disk.clone())),
        }
    }
}

impl fmt::Display for Control {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Control {
    type Err = String;
    fn from_str(s: &str) -> Result<Control, String> {
        Control::ALL
            .into_iter()
            .find(|c| c.name() == s)
            .ok_or_else(|| {
                let names: Vec<&str> = Control::ALL.iter().map(|c| c.name()).collect();
                format!(
                    "unknown control `{s}` (expected one of: {})",
                    names.join(", ")
                )
            })
    }
}
