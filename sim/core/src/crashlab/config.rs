//! crashlab's engine options as an engine configuration: drawn from a seed, written into and
//! read from case files, varied by `crashlab check --variants`, with the debug hooks the
//! negative controls turn on.

use crate::adapter::{Capabilities, Checksummed, EngineConfig};
use crate::control::Control;
use crate::limits::{at_most, MAX_BATCH_MAX, PAGE_CACHE_PAGES_MAX};
use crate::profile::Profile;
use crate::rng::SimRng;
use crate::words::{flag, num, settings};
use crashlab_engine::batch::MergeStrategy;
use crashlab_engine::{DebugHooks, FreelistKind, Options, PresizePolicy};
use crashlab_format::meta::META_SIZE;
use crashlab_format::page::PAGE_HEADER_SIZE;

// The model's key limit is the engine's, which `refuses_long_keys` below declares.
const _: () = assert!(crashlab_models::KEY_LEN_MAX == crashlab_engine::limits::MAX_KEY_SIZE);

/// The share of seeds whose later sessions may switch the freelist's settings (`at_open`).
const SWITCHING_SEEDS: f64 = 0.25;

/// The share of seeds that draw 16 or 64 KiB pages (bbolt's on machines of those memory pages).
const LARGE_PAGES_CHANCE: f64 = 1.0 / 16.0;

impl EngineConfig for Options {
    const ENGINE: &'static str = "crashlab";

    /// Engine options drawn from the seed (every profile draws the same, except that `scale`
    /// then takes 512-byte pages, which make its thresholds cheap to reach, and a page cache).
    fn from_seed(seed: u64, profile: Profile) -> Options {
        let mut r = SimRng::derive(seed, "options");
        let drawn = Options {
            page_size: *r.pick(&[512u32, 1024, 4096]),
            fill_percent: *r.pick(&[0.5, 0.5, 1.0]),
            no_sync: r.chance(0.1),
            no_freelist_sync: r.chance(0.5),
            freelist: *r.pick(&[FreelistKind::Array, FreelistKind::Hashmap]),
            page_cache_pages: *r.pick(&[0usize, 8, 1024]),
            read_only: false,
            // Drawn after the others, so adding it left every earlier choice of a seed unchanged.
            presize: *r.pick(&[
                PresizePolicy::Grow,
                PresizePolicy::Exact,
                PresizePolicy::Estimate,
            ]),
            ..Options::default()
        };
        // Drawn after the pre-size policy, for the same reason: a group's merged calls go through
        // either strategy.
        let drawn = Options {
            merge_strategy: *r.pick(&MERGE),
            ..drawn
        };
        // Drawn after the merge strategy, for the same reason. The default limit is never
        // reached by a group (at most 64 callers); a small one fills batches, splits a group's
        // calls over several commits and leaves calls queued behind a running batch.
        let drawn = Options {
            max_batch_size: if r.chance(0.3) {
                *r.pick(&[1, 2, 3, 8])
            } else {
                Options::default().max_batch_size
            },
            ..drawn
        };
        // Drawn after the batch limit, for the same reason: large pages on a sixteenth of the
        // seeds, where a quantity that fits 16 bits at smaller pages may not (65,536 itself,
        // an offset within a page, a quarter page). With a page cache, as under `scale`: each
        // uncached read of a 64 KiB page copies it through the simulated disk's sectors, and
        // the model's whole-state comparisons of nested buckets made one seed take minutes.
        let drawn = match r.chance(LARGE_PAGES_CHANCE) {
            true => Options {
                page_size: *r.pick(&[16_384, 65_536]),
                page_cache_pages: drawn.page_cache_pages.max(1024),
                ..drawn
            },
            false => drawn,
        };
        if profile.reaches_scale() {
            // A page cache: without one, every reader's whole-snapshot check decodes every page
            // of thousands of buckets or 33 MiB of values again.
            return Options {
                page_size: 512,
                page_cache_pages: drawn.page_cache_pages.max(1024),
                ..drawn
            };
        }
        drawn
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities {
            nested_buckets: true,
            refuses_long_keys: true,
            sequences: true,
            live_check: true,
            write_batches: true,
            concurrent_callers: true,
            max_batch_calls: u32::try_from(self.max_batch_size).unwrap_or(u32::MAX),
            reader_views: true,
            io_error_ends_session: false,
            latches_after_failed_commit: true,
            crash_is_process_crash: self.no_sync,
            close_writes: false,
            acknowledged_survive_process_crash: true,
            meta_region_len: 2 * u64::from(self.page_size),
            page_size: self.page_size,
            checksummed: meta_ranges(self.page_size),
            directory: false,
        }
    }

    fn describe(&self) -> String {
        format_options(self)
    }

    fn to_case_text(&self) -> Option<String> {
        Some(format_options(self))
    }

    fn parse_case_text(text: &str, _seed: u64, _profile: Profile) -> Result<Options, String> {
        parse_options(text)
    }

    fn control(&self) -> Control {
        hooks_control(&self.debug).unwrap_or_default()
    }

    fn with_control(&self, control: Control) -> Result<Options, String> {
        let debug = DebugHooks {
            meta_same_slot: control == Control::MetaSameSlot,
            skip_meta_checksum: control == Control::MetaUnchecked,
            reuse_pages_under_readers: control == Control::ReuseUnderReaders,
            batch_keeps_failed_call: control == Control::BatchKeepsFailedCall,
            no_latch: control == Control::NoLatch,
            prev_skips_leaf_end: control == Control::PrevSkipsLeafEnd,
            leak_freed_pages: control == Control::LeakFreedPages,
            emptied_bucket_leaks: control == Control::EmptiedBucketLeak,
            double_free_in_commit: control == Control::DoubleFreeInCommit,
            panic_in_commit_txid: if control == Control::PanicInCommit {
                crate::control::PANIC_IN_COMMIT_TXID
            } else {
                0
            },
            lone_call_skips_data_sync: control == Control::LoneCallSkipsDataSync,
            freelist_count_wraps: control == Control::FreelistCountWraps,
            // The commit's reference check refuses this one before anything is written, so no
            // sweep could tell its refusal from a damaged file's: its test is the engine's own
            // (`tests/commit_reference_check.rs`).
            free_referenced_child: false,
            rebuild_drops_last_call: control == Control::RebuildDropsLastCall,
            get_compares_16_bytes: control == Control::GetCompares16Bytes,
            full_batch_drops_last_call: control == Control::FullBatchDropsLastCall,
            batch_exceeds_limit: control == Control::BatchExceedsLimit,
            inline_keeps_sub_buckets: control == Control::InlineKeepsSubBuckets,
            branch_frees_first_page: control == Control::BranchFreesFirstPage,
            meta_checksum_skips_txid: control == Control::MetaChecksumSkipsTxid,
            sequence_skips_dirty: control == Control::SequenceSkipsDirty,
            merge_keeps_branch_separator: control == Control::MergeKeepsBranchSeparator,
            inline_up_to_half_page: control == Control::InlineUpToHalfPage,
            page_size_16_bits: control == Control::PageSize16Bits,
            refusal_does_not_latch: control == Control::RefusalDoesNotLatch,
            empty_leaf_ends_scan: control == Control::EmptyLeafEndsScan,
            put_over_bucket: control == Control::PutOverBucket,
            delete_leaks_sub_buckets: control == Control::DeleteLeaksSubBuckets,
            delete_answers_existed: control == Control::DeleteAnswersExisted,
            empty_leaf_ends_reverse_scan: control == Control::EmptyLeafEndsReverseScan,
            key_limit_one_short: control == Control::KeyLimitOneShort,
            dropped_freelist_frees_first_page: control == Control::DroppedFreelistFreesFirstPage,
        };
        Ok(Options {
            debug,
            ..self.clone()
        })
    }

    /// A quarter of the seeds (`SWITCHING_SEEDS`), from a stream of their own.
    fn switches_settings(&self, seed: u64) -> bool {
        SimRng::derive(seed, "reopen options").chance(SWITCHING_SEEDS)
    }

    /// Each session after the first may switch what an application may change between runs of
    /// one file, each with probability one half: whether the freelist is persisted
    /// (`no_freelist_sync`: the first commit after turning it on drops the persisted list, the
    /// open after turning it off writes one at once) and the free set's kind (array or hashmap,
    /// built from the same file). The page size (the file fixes it), `no_sync` (what a commit
    /// promises) and the debug hooks stay.
    fn at_open(&self, seed: u64, session: u64) -> Option<Options> {
        if session == 0 {
            return None;
        }
        let mut r = SimRng::derive(seed, &format!("session {session} options"));
        let mut other = self.clone();
        if r.chance(0.5) {
            other.no_freelist_sync = !other.no_freelist_sync;
        }
        if r.chance(0.5) {
            other.freelist = match other.freelist {
                FreelistKind::Array => FreelistKind::Hashmap,
                FreelistKind::Hashmap => FreelistKind::Array,
            };
        }
        (other != *self).then_some(other)
    }

    /// Every freelist kind × freelist synced or not × pre-size policy (the checker multiplies
    /// by batched or not): 12 configurations.
    fn variants(&self) -> Result<Vec<Options>, String> {
        let mut all = Vec::new();
        for freelist in [FreelistKind::Array, FreelistKind::Hashmap] {
            for no_freelist_sync in [false, true] {
                for presize in PRESIZE {
                    all.push(Options {
                        freelist,
                        no_freelist_sync,
                        presize,
                        ..self.clone()
                    });
                }
            }
        }
        Ok(all)
    }
}

const MERGE: [MergeStrategy; 2] = [MergeStrategy::Append, MergeStrategy::Rebuild];

const PRESIZE: [PresizePolicy; 3] = [
    PresizePolicy::Grow,
    PresizePolicy::Exact,
    PresizePolicy::Estimate,
];

pub fn format_options(o: &Options) -> String {
    let freelist = match o.freelist {
        FreelistKind::Array => "array",
        FreelistKind::Hashmap => "hashmap",
    };
    let mut text = format!(
        "page_size={} fill_percent={} no_sync={} no_freelist_sync={} freelist={freelist} page_cache_pages={} presize={}",
        o.page_size, o.fill_percent, o.no_sync, o.no_freelist_sync, o.page_cache_pages,
        presize_name(o.presize)
    );
    if o.merge_strategy != MergeStrategy::Append {
        // Written only when not the default, so case files from before the draw still say
        // what they ran.
        text.push_str(&format!(" merge={}", merge_name(o.merge_strategy)));
    }
    if o.max_batch_size != Options::default().max_batch_size {
        // The engine's default, which a case does not name.
        text.push_str(&format!(" max_batch={}", o.max_batch_size));
    }
    if let Some(control) = hooks_control(&o.debug) {
        // Only a negative control turns a hook on; its case must replay with it on.
        text.push_str(&format!(" debug={control}"));
    }
    text
}

/// The control whose debug hooks `debug` are, when one is on.
/// The two metas' 64 bytes (pages 0 and 1, after each page's header): the format's checksum
/// covers them whole, and open falls back to the other slot when one fails it.
fn meta_ranges(page_size: u32) -> Checksummed {
    let at = PAGE_HEADER_SIZE as u64;
    let len = META_SIZE as u64;
    Checksummed::of(&[(at, len), (u64::from(page_size) + at, len)])
}

fn hooks_control(debug: &DebugHooks) -> Option<Control> {
    if *debug == DebugHooks::default() {
        return None;
    }
    let base = Options::default();
    let found = Control::ALL
        .into_iter()
        .find(|&c| base.with_control(c).is_ok_and(|o| o.debug == *debug));
    assert!(found.is_some(), "debug hooks {debug:?} are no control's");
    found
}

pub fn presize_name(p: PresizePolicy) -> &'static str {
    match p {
        PresizePolicy::Grow => "grow",
        PresizePolicy::Exact => "exact",
        PresizePolicy::Estimate => "estimate",
    }
}

fn merge_name(m: MergeStrategy) -> &'static str {
    match m {
        MergeStrategy::Append => "append",
        MergeStrategy::Rebuild => "rebuild",
    }
}

fn parse_merge(v: &str) -> Result<MergeStrategy, String> {
    MERGE
        .into_iter()
        .find(|m| merge_name(*m) == v)
        .ok_or_else(|| format!("expected append or rebuild for `merge`, found `{v}`"))
}

fn parse_presize(v: &str) -> Result<PresizePolicy, String> {
    PRESIZE
        .into_iter()
        .find(|p| presize_name(*p) == v)
        .ok_or_else(|| format!("expected grow, exact or estimate for `presize`, found `{v}`"))
}

fn parse_options(s: &str) -> Result<Options, String> {
    let mut o = Options::default();
    for (k, v) in settings(s)? {
        match k {
            "page_size" => o.page_size = num(k, v)?,
            "fill_percent" => o.fill_percent = num(k, v)?,
            "no_sync" => o.no_sync = flag(k, v)?,
            "no_freelist_sync" => o.no_freelist_sync = flag(k, v)?,
            "page_cache_pages" => {
                let pages = num(k, v)?;
                o.page_cache_pages =
                    at_most(k, pages, PAGE_CACHE_PAGES_MAX, "PAGE_CACHE_PAGES_MAX")?;
            }
            "presize" => o.presize = parse_presize(v)?,
            "merge" => o.merge_strategy = parse_merge(v)?,
            "max_batch" => {
                let calls = num(k, v)?;
                if calls == 0 {
                    return Err("max_batch 0: a batch holds at least one call".into());
                }
                o.max_batch_size = at_most(k, calls, MAX_BATCH_MAX, "MAX_BATCH_MAX")?;
            }
            "debug" => o.debug = o.with_control(v.parse::<Control>()?)?.debug,
            "freelist" => {
                o.freelist = match v {
                    "array" => FreelistKind::Array,
                    "hashmap" => FreelistKind::Hashmap,
                    _ => {
                        return Err(format!(
                            "expected array or hashmap for `freelist`, found `{v}`"
                        ))
                    }
                }
            }
            _ => return Err(format!("unknown option `{k}`")),
        }
    }
    if !crashlab_format::page::page_size_valid(o.page_size) {
        return Err(format!(
            "page_size {} is not a power of two in [512, 65536]",
            o.page_size
        ));
    }
    if !(0.1..=1.0).contains(&o.fill_percent) {
        return Err(format!(
            "fill_percent {} is outside [0.1, 1]",
            o.fill_percent
        ));
    }
    Ok(o)
}
