//! Free-page management (bbolt's `internal/freelist`).
//!
//! A page a write transaction frees is not reusable at once: a read transaction that started
//! before the commit may still read it. So a freed page goes to `pending` under the freeing
//! txid, and moves to the free set only when a later write transaction begins and no open
//! reader can see it ([`Freelist::release_pending`]). The free set itself is one of two
//! implementations with different allocation cost and choice ([`FreelistKind`]); everything
//! else (pending, allocation records, reader gaps, rollback) is shared here.
//!
//! Invariants:
//! * every id in the free set or pending is >= 2 (pages 0 and 1 are the metas);
//! * no id is both free and pending, and no id is pending twice;
//! * `pending_index` holds exactly the ids of the `pending` queue;
//! * `allocs` maps the first page of an allocation to the write tx that made it, until the
//!   allocation is freed or its transaction rolled back.
//!
//! Differences from bbolt, all deliberate: allocations from the high-water mark can be recorded
//! ([`Freelist::record_allocation`]) so more pages qualify for gap release; the hashmap choice is
//! deterministic; bbolt's `lastReleaseBegin` memo is left out (it only skips work whose result
//! cannot change, since a page is never freed before it is allocated).

mod array;
mod filter;
mod hashmap;
mod idset;
mod pending;
mod sorted_runs;
mod taken;

use crate::error::{Error, FormatError, Result};
use crate::page_map::PageMap;
use array::ArrayFreeSet;
pub use crashlab_format::corruption::FreeRefusal;
use crashlab_format::limits::MAX_FREE_IDS;
use crashlab_format::pageset::PageSet;
use crashlab_format::types::{PageId, PageSpan, TxId};
pub use filter::FreeFilter;
use hashmap::HashmapFreeSet;
use idset::IdSet;
use pending::{Pending, PendingPage};
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
pub(crate) use taken::Taken;

/// Which free-set implementation a database uses.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum FreelistKind {
    /// Sorted id array, lowest-id first fit (bbolt's default).
    #[default]
    Array,
    /// Maximal spans, a vector while few and indexed by start and by size once many; exact
    /// fit, else best fit (see `hashmap.rs`).
    Hashmap,
}

/// Deterministic cost counters of the freelist.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FreelistCounters {
    /// Calls to [`Freelist::allocate`], including those that return `None`.
    pub allocate_calls: u64,
    /// Runs (array) or size buckets (hashmap) examined by those calls.
    pub allocate_scan_steps: u64,
    /// Run entries (array: changed in place or shifted in its vector) or span index entries
    /// (hashmap) touched to keep the free set ordered when pages are allocated from it or
    /// released into it: the work a scan-step count misses.
    pub ids_moved: u64,
}

/// The most free runs [`Freelist::allocate_idle`] looks at, lowest first: enough for the short
/// runs a once-large file keeps below its long one, and a bound on the work on a set that is
/// fragmented everywhere.
const IDLE_SCAN_MAX: usize = 64;

/// The set of free pages, whatever its representation. Both keep maximal runs, so their memory
/// and work follow how fragmented the set is, never how many pages it holds.
trait FreeSet {
    /// Replace the set with `ids` (strictly ascending, each >= 2).
    fn init(&mut self, ids: &[PageId]);
    /// Replace the set with the pages of `free` (each >= 2).
    fn init_spans(&mut self, free: &PageSet);
    /// Replace the set with `runs` (ascending, disjoint, maximal, each page >= 2).
    fn init_runs(&mut self, runs: &[PageSpan]);
    /// Remove and return the first page of `n >= 1` consecutive free pages.
    fn allocate(&mut self, n: u64, scan_steps: &mut u64, moved: &mut u64) -> Option<PageId>;
    /// Remove and return a maximal run of exactly `n >= 1` pages, the lowest such, if any: a
    /// commit's reservation (`commit/reserve.rs`), which must not split a longer run and leave
    /// the rest behind as fragments no reservation takes.
    fn take_exact(&mut self, n: u64, scan_steps: &mut u64, moved: &mut u64) -> Option<PageId>;
    /// The run [`FreeSet::allocate`] would take `n` pages from, if any.
    fn fit(&self, n: u64) -> Option<PageSpan>;
    /// The lowest of the set's first `max` runs (ascending) for which `pred` holds, visiting
    /// no run past the one it returns or the `max`-th.
    fn lowest_run_where(
        &self,
        max: usize,
        pred: &mut dyn FnMut(PageSpan) -> bool,
    ) -> Option<PageSpan>;
    /// Remove the first `n` pages of `run`, one of the set's maximal runs, holding at least
    /// `n`; counts the entries that change or shift.
    fn take_front(&mut self, run: PageSpan, n: u64, moved: &mut u64);
    /// Add `ids` (strictly ascending, none already in the set).
    fn merge(&mut self, ids: &[PageId], moved: &mut u64) {
        for run in runs_in(ids.iter().copied()) {
            self.merge_run(run, moved);
        }
    }
    /// Add the pages of `run` (none already in the set), joining the runs it touches. Counts
    /// the entries that change or shift.
    fn merge_run(&mut self, run: PageSpan, moved: &mut u64);
    fn contains(&self, id: PageId) -> bool;
    /// The lowest page of `span` in the set.
    fn first_within(&self, span: PageSpan) -> Option<PageId>;
    fn count(&self) -> u64;
    /// Call `f` with each maximal run, ascending (a commit's freelist page and filter walk
    /// them without a list of their own).
    fn for_each_run(&self, f: &mut dyn FnMut(PageSpan));
    /// How many maximal runs there are.
    fn run_count(&self) -> usize;
    /// The maximal runs, ascending.
    fn runs(&self) -> Vec<PageSpan> {
        let mut out = Vec::with_capacity(self.run_count());
        self.for_each_run(&mut |run| out.push(run));
        out
    }
    /// All ids, ascending (for tests and verify: one entry per page).
    fn ids(&self) -> Vec<PageId> {
        let mut out = Vec::with_capacity(self.count() as usize);
        out.extend(self.runs().into_iter().flat_map(PageSpan::ids));
        out
    }
    /// The set as a [`PageSet`].
    fn spans(&self) -> PageSet {
        let mut set = PageSet::new();
        for run in self.runs() {
            set.insert(run.start, run.end());
        }
        set
    }
}

/// Group strictly ascending ids into maximal runs.
fn runs_of(ids: &[PageId]) -> Vec<PageSpan> {
    runs_in(ids.iter().copied()).collect()
}

/// The maximal runs of strictly ascending ids, one at a time (nothing allocated).
fn runs_in(ids: impl IntoIterator<Item = PageId>) -> impl Iterator<Item = PageSpan> {
    let mut ids = ids.into_iter().peekable();
    std::iter::from_fn(move || {
        let mut run = PageSpan::new(ids.next()?, 1);
        while ids.next_if_eq(&run.end()).is_some() {
            run.count += 1;
        }
        if let Some(&next) = ids.peek() {
            assert!(next > run.end(), "ids not strictly ascending at {next}");
        }
        Some(run)
    })
}

#[derive(Clone, Debug)]
enum FreeSetImpl {
    Array(ArrayFreeSet),
    Hashmap(HashmapFreeSet),
}

impl FreeSetImpl {
    fn get(&self) -> &dyn FreeSet {
        match self {
            FreeSetImpl::Array(s) => s,
            FreeSetImpl::Hashmap(s) => s,
        }
    }

    fn get_mut(&mut self) -> &mut dyn FreeSet {
        match self {
            FreeSetImpl::Array(s) => s,
            FreeSetImpl::Hashmap(s) => s,
        }
    }
}

/// Free and pending pages of one database (see the module docs).
#[derive(Clone, Debug)]
pub struct Freelist {
    kind: FreelistKind,
    free: FreeSetImpl,
    pending: Pending,
    pending_index: IdSet,
    /// Looked up and removed once per page a commit frees, and added once per allocation: a
    /// hash map (the B-tree it was cost a one-key Set a thousand instructions).
    allocs: PageMap<TxId>,
    /// The ids the last release brought back (ascending), in room kept so that a release
    /// allocates nothing.
    released: Vec<PageId>,
    counters: FreelistCounters,
}

impl Freelist {
    pub fn new(kind: FreelistKind) -> Freelist {
        let free = match kind {
            FreelistKind::Array => FreeSetImpl::Array(ArrayFreeSet::default()),
            FreelistKind::Hashmap => FreeSetImpl::Hashmap(HashmapFreeSet::default()),
        };
        Freelist {
            kind,
            free,
            pending: Pending::default(),
            pending_index: IdSet::default(),
            allocs: PageMap::default(),
            released: Vec::new(),
            counters: FreelistCounters::default(),
        }
    }

    /// Replace the free set with `free_ids` (sorted ascending, unique, every id >= 2, none
    /// pending). Pending is kept. (bbolt `Init`)
    pub fn init(&mut self, free_ids: &[PageId]) {
        assert!(
            free_ids.windows(2).all(|w| w[0] < w[1]),
            "free ids must be strictly ascending"
        );
        if let Some(first) = free_ids.first() {
            assert!(first.0 >= 2, "meta page {first} cannot be free");
        }
        debug_assert!(
            free_ids.iter().all(|&id| !self.pending_index.contains(id)),
            "a pending page cannot be initialised as free"
        );
        self.free.get_mut().init(free_ids);
    }

    /// [`Freelist::init`] from ascending, disjoint, maximal runs (a decoded freelist page).
    pub fn init_runs(&mut self, runs: &[PageSpan]) {
        assert!(
            runs.windows(2).all(|w| w[0].end() < w[1].start),
            "free runs must be ascending, disjoint and maximal"
        );
        if let Some(first) = runs.first() {
            assert!(
                first.start.0 >= 2,
                "meta page {} cannot be free",
                first.start
            );
        }
        debug_assert!(
            runs.iter()
                .all(|r| self.pending_index.first_within(r.start, r.end()).is_none()),
            "a pending page cannot be initialised as free"
        );
        self.free.get_mut().init_runs(runs);
    }

    pub fn kind(&self) -> FreelistKind {
        self.kind
    }

    /// Replace the free set with the pages of `free` (every page >= 2, none pending), as open's
    /// rebuild finds them. Both sets keep runs, whatever the number of pages; the array kind
    /// still refuses past [`MAX_FREE_IDS`] with [`Error::TooManyFreeIds`], before allocating: it
    /// is bbolt's kind, whose files carry one id per free page, and the limit stays its contract
    /// (regressions 008 and 011), now that its memory follows runs.
    pub fn init_spans(&mut self, free: &PageSet) -> Result<()> {
        if let Some(first) = free.runs().next() {
            assert!(
                first.start.0 >= 2,
                "meta page {} cannot be free",
                first.start
            );
        }
        if self.kind == FreelistKind::Array && free.len() > MAX_FREE_IDS {
            return Err(Error::Format(FormatError::TooManyFreeIds {
                what: "array freelist",
                count: free.len(),
                max: MAX_FREE_IDS,
            }));
        }
        self.free.get_mut().init_spans(free);
        debug_assert!(
            self.pending_index.iter().all(|id| !free.contains(id)),
            "a pending page cannot be initialised as free"
        );
        Ok(())
    }

    /// Reload from the id list of a persisted freelist page: free = ids minus every pending id.
    /// (bbolt `NoSyncReload`/`Reload`: used after a failed commit, when the in-memory free set
    /// may have handed out pages the disk still considers free.)
    #[cfg_attr(
        not(any(test, feature = "internals")),
        expect(dead_code, reason = "driven only by the freelist model test")
    )]
    pub fn reload(&mut self, ids: &[PageId]) {
        let free: Vec<PageId> = ids
            .iter()
            .copied()
            .filter(|&id| !self.pending_index.contains(id))
            .collect();
        self.init(&free);
    }

    /// Allocate `n` contiguous free pages for write tx `txid`. `None` when no run of `n` fits
    /// (the engine then takes pages at the high-water mark) or when `n == 0`.
    pub fn allocate(&mut self, txid: TxId, n: u64) -> Option<PageId> {
        self.take(txid, n, |set, n, steps, moved| {
            set.allocate(n, steps, moved)
        })
    }

    /// Allocate with `pick` (a free set's rule), counting the call and recording the allocation.
    fn take(
        &mut self,
        txid: TxId,
        n: u64,
        pick: impl FnOnce(&mut dyn FreeSet, u64, &mut u64, &mut u64) -> Option<PageId>,
    ) -> Option<PageId> {
        self.counters.allocate_calls += 1;
        if n == 0 {
            return None;
        }
        let start = pick(
            self.free.get_mut(),
            n,
            &mut self.counters.allocate_scan_steps,
            &mut self.counters.ids_moved,
        )?;
        assert!(start.0 >= 2, "allocated meta page {start}");
        debug_assert!(
            !self.pending_index.contains(start),
            "allocated pending page {start}"
        );
        self.allocs.insert(start, txid);
        Some(start)
    }

    /// Return `span`, pages write tx `txid` allocated from the free set and never used, to the
    /// free set: a commit's reservation left over (`commit/reserve.rs`). Not pending — no
    /// snapshot can have seen pages nothing was written to.
    pub fn give_back(&mut self, txid: TxId, span: PageSpan) {
        assert!(span.start.0 >= 2, "gave back meta page {}", span.start);
        assert!(
            self.refusal_page(span).is_none(),
            "gave back a free or pending page in {span:?}"
        );
        if self.allocs.get(&span.start) == Some(&txid) {
            self.allocs.remove(&span.start);
        }
        self.free
            .get_mut()
            .merge_run(span, &mut self.counters.ids_moved);
    }

    /// Like [`Freelist::allocate`], but only a maximal run of exactly `n` pages (see
    /// `FreeSet::take_exact`).
    pub fn allocate_exact(&mut self, txid: TxId, n: u64) -> Option<PageId> {
        self.take(txid, n, |set, n, steps, moved| {
            set.take_exact(n, steps, moved)
        })
    }

    /// Allocate `n` contiguous pages for write tx `txid` where they may stay for good: the
    /// lowest run of the first [`IDLE_SCAN_MAX`] that holds them, unless the release at this
    /// transaction's start brought it back and it is long enough (`keep` pages) to be the run
    /// the commit's reservation takes back whole (the pages the commit two before wrote); else
    /// the front of a run at least `long` pages longer than `n`. `None` when neither is free
    /// (the engine then takes pages at the high-water mark).
    pub fn allocate_idle(
        &mut self,
        txid: TxId,
        n: u64,
        (keep, long): (u64, u64),
    ) -> Option<PageId> {
        let mut looked = 0;
        let released = &self.released;
        let idle = self.free.get().lowest_run_where(IDLE_SCAN_MAX, &mut |run| {
            looked += 1;
            let first_back = released.partition_point(|&id| id < run.start);
            let came_back = released.get(first_back).is_some_and(|&id| id < run.end());
            run.count >= n && !(came_back && run.count >= keep)
        });
        self.counters.allocate_scan_steps += looked;
        let run = idle.or_else(|| self.fit(n + long))?;
        self.take(txid, n, |set, n, _, moved| {
            set.take_front(run, n, moved);
            Some(run.start)
        })
    }

    /// The run [`Freelist::allocate`] would take `n` pages from, if any.
    pub fn fit(&self, n: u64) -> Option<PageSpan> {
        self.free.get().fit(n)
    }

    /// Free pages outside `run` (a free run) but those the release at this write tx's start
    /// brought back in runs of fewer than `short` pages: a commit's pages taken one by one and
    /// coming back, not idle (`commit/reserve.rs`). A longer released run is a whole generation
    /// and counts.
    pub fn idle_outside(&self, run: PageSpan, short: u64) -> u64 {
        let free = self.free.get();
        let came_back = |id: &&PageId| !(run.start..run.end()).contains(*id) && free.contains(**id);
        let back: u64 = self
            .released
            .chunk_by(|a, b| b.0 == a.0 + 1)
            .filter(|released| (released.len() as u64) < short)
            .map(|released| released.iter().filter(came_back).count() as u64)
            .sum();
        let outside = free.count() - run.count;
        assert!(
            back <= outside,
            "released ids are distinct free pages outside the run"
        );
        outside - back
    }

    /// Record that write tx `txid` took pages starting at `start` from the high-water mark, so
    /// that gap release knows when they were allocated. bbolt records only freelist allocations.
    pub fn record_allocation(&mut self, txid: TxId, start: PageId) {
        assert!(start.0 >= 2, "meta page {start} cannot be allocated");
        debug_assert!(!self.free.get().contains(start), "page {start} is free");
        debug_assert!(
            !self.pending_index.contains(start),
            "page {start} is pending"
        );
        self.allocs.insert(start, txid);
    }

    /// Pages freed by write tx `txid`: they become pending under `txid`. Every page of the span
    /// inherits the allocating txid recorded for its first page. Freeing a page twice is a
    /// programmer error here; use [`Freelist::try_free`] where the span comes from disk.
    #[cfg_attr(
        not(any(test, feature = "internals")),
        expect(dead_code, reason = "driven only by the freelist model test")
    )]
    pub fn free(&mut self, txid: TxId, span: PageSpan) {
        if let Err(refusal) = self.try_free(txid, span) {
            panic!("{refusal}");
        }
    }

    /// Like [`Freelist::free`], but refuses — changing nothing — when a page of the span is a
    /// meta page or already free or pending. A corrupt tree that references a page twice
    /// reaches this, so it must not panic.
    pub fn try_free(&mut self, txid: TxId, span: PageSpan) -> Result<(), FreeRefusal> {
        if let Some(page) = self.refusal_page(span) {
            return Err(page);
        }
        let alloc_tx = self.allocs.remove(&span.start).unwrap_or(TxId(0));
        for id in span.ids() {
            self.pending_index.insert(id);
            self.pending.push(PendingPage {
                freed_by: txid,
                id,
                alloc_tx,
            });
        }
        Ok(())
    }

    /// Why freeing `span` is refused, naming its lowest page that is a meta page, free or
    /// pending; by span, not by page (a freelist page run is a thousand pages).
    fn refusal_page(&self, span: PageSpan) -> Option<FreeRefusal> {
        if span.start.0 < 2 {
            return Some(FreeRefusal::MetaPage(span.start));
        }
        let free = self.free.get().first_within(span);
        let pending = self.pending_index.first_within(span.start, span.end());
        match (free, pending) {
            (Some(f), Some(p)) if p < f => Some(FreeRefusal::AlreadyPending(p)),
            (Some(f), _) => Some(FreeRefusal::AlreadyFree(f)),
            (None, Some(p)) => Some(FreeRefusal::AlreadyPending(p)),
            (None, None) => None,
        }
    }

    /// Called when a write tx begins, with the txids of open readers (ascending, duplicates
    /// allowed). Releases, as bbolt's `ReleasePendingPages`: every pending list freed before the
    /// oldest reader (all of them without readers), then in every gap between consecutive
    /// readers and after the last one, each page whose freeing and allocating txids both lie in
    /// that gap — no reader can have seen it.
    pub fn release_pending(&mut self, readers: &[TxId]) {
        assert!(
            readers.windows(2).all(|w| w[0] <= w[1]),
            "readers must be sorted"
        );
        let mut released = std::mem::take(&mut self.released);
        released.clear();
        self.pending
            .take_freed_before(readers.first().copied(), &mut released);
        if !readers.is_empty() {
            for (first, last) in reader_gaps(readers) {
                self.pending.take_lived_within(first, last, &mut released);
            }
        }
        released.sort_unstable();
        for &id in &released {
            let was_pending = self.pending_index.remove(id);
            assert!(was_pending, "released page {id} was not pending");
        }
        if !released.is_empty() {
            self.free
                .get_mut()
                .merge(&released, &mut self.counters.ids_moved);
        }
        self.released = released;
    }

    /// Forget what write tx `txid` freed and the allocations it made (bbolt `Rollback`). Pages
    /// it allocated stay out of the free set; the engine reloads the free set for that.
    #[cfg_attr(
        not(any(test, feature = "internals")),
        expect(dead_code, reason = "driven only by the freelist model test")
    )]
    pub fn rollback(&mut self, txid: TxId) {
        for page in self.pending.take_freed_by(txid) {
            self.pending_index.remove(page.id);
            if page.alloc_tx != TxId(0) {
                self.allocs.insert(page.id, page.alloc_tx);
            }
        }
        self.allocs.retain(|_, by| *by != txid);
    }

    /// Whether write tx `txid` freed `id` (it is pending under `txid`). A scan of that tx's
    /// list: for the rare refusal that needs it, never on a commit's common path.
    pub fn is_pending_from(&self, txid: TxId, id: PageId) -> bool {
        self.pending.freed_by(txid).any(|p| p.id == id)
    }

    /// Whether `id` is free or pending.
    pub fn is_free_or_pending(&self, id: PageId) -> bool {
        self.pending_index.contains(id) || self.free.get().contains(id)
    }

    /// A filter that answers most of a commit's [`Freelist::is_free_or_pending`] questions
    /// without searching (see `filter.rs`): of every free and pending page when they are few,
    /// of the pending pages and the free runs when the runs are few, else one letting every
    /// question through.
    pub fn filter(&self) -> FreeFilter {
        let free = self.free.get();
        let pending = self.pending_count();
        if free.count() + pending <= filter::MAX_PAGES {
            let mut filter = FreeFilter::empty();
            free.for_each_run(&mut |run| filter.add_run(run));
            self.pending_index.iter().for_each(|id| filter.add(id));
            filter
        } else if pending <= filter::MAX_PAGES && free.run_count() <= filter::MAX_RUNS {
            let mut filter = FreeFilter::for_runs(free.run_count());
            self.pending_index.iter().for_each(|id| filter.add(id));
            free.for_each_run(&mut |run| filter.keep_run(run));
            filter
        } else {
            FreeFilter::pass_all()
        }
    }

    pub fn free_count(&self) -> u64 {
        self.free.get().count()
    }

    pub fn pending_count(&self) -> u64 {
        self.pending_index.len() as u64
    }

    /// Free ids, ascending.
    pub fn free_ids(&self) -> Vec<PageId> {
        self.free.get().ids()
    }

    /// The free set as runs: what `check()` compares, in memory that follows the runs (the array
    /// set is walked once, the hashmap set already holds spans).
    pub fn free_spans(&self) -> PageSet {
        self.free.get().spans()
    }

    /// Pending ids, ascending.
    pub fn pending_ids(&self) -> Vec<PageId> {
        self.pending_index.iter().collect()
    }

    /// Free and pending ids, ascending: what a freelist page stores, one entry per page (the
    /// commit encodes [`Freelist::all_runs`] instead).
    #[cfg_attr(
        not(any(test, feature = "internals")),
        expect(dead_code, reason = "driven only by the freelist model test")
    )]
    pub fn all_ids(&self) -> Vec<PageId> {
        self.all_runs()
            .into_iter()
            .flat_map(PageSpan::ids)
            .collect()
    }

    /// Free and pending pages as ascending, disjoint runs (two runs may touch): what a freelist
    /// page stores, in memory that follows the free set's runs and the pending pages.
    pub fn all_runs(&self) -> Vec<PageSpan> {
        let mut all = Vec::new();
        self.all_runs_into(&mut all);
        all
    }

    /// [`Freelist::all_runs`] into `all` (emptied first), whose allocation a commit keeps.
    pub fn all_runs_into(&self, all: &mut Vec<PageSpan>) {
        // Merged as the free set walks its runs: no list of either kind's own. `all` is the
        // commit's kept list, so sizing it by the free runs alone leaves the few pending runs to
        // room it already has, without a walk of the pending ids to count them first.
        let free = self.free.get();
        all.clear();
        all.reserve(free.run_count());
        let mut p = runs_in(self.pending_index.iter()).peekable();
        free.for_each_run(&mut |run| {
            while let Some(before) = p.next_if(|r| r.start < run.start) {
                all.push(before);
            }
            all.push(run);
        });
        all.extend(p);
        debug_assert!(all.windows(2).all(|w| w[0].end() <= w[1].start));
    }

    pub fn counters(&self) -> FreelistCounters {
        self.counters
    }

    /// Check every invariant of the module header. O(free + pending); for tests and verify
    /// modes, panics on the first violation.
    #[cfg_attr(
        not(any(test, feature = "internals")),
        expect(dead_code, reason = "driven only by the freelist model test")
    )]
    pub fn verify(&self) {
        let free = self.free_ids();
        assert!(
            free.windows(2).all(|w| w[0] < w[1]),
            "free ids not strictly ascending"
        );
        assert_eq!(
            free.len() as u64,
            self.free_count(),
            "free count disagrees with free ids"
        );
        let mut listed = BTreeSet::new();
        let mut last_freed_by = TxId(0);
        for page in self.pending.iter() {
            assert!(
                page.freed_by >= last_freed_by,
                "pending queue out of txid order"
            );
            last_freed_by = page.freed_by;
            assert!(listed.insert(page.id), "page {} pending twice", page.id);
        }
        assert!(
            listed.iter().copied().eq(self.pending_index.iter()),
            "pending index disagrees with the pending queue"
        );
        for id in free.iter().chain(&listed) {
            assert!(id.0 >= 2, "meta page {id} in the freelist");
        }
        for id in &listed {
            assert!(
                !self.free.get().contains(*id),
                "page {id} both free and pending"
            );
        }
    }
}

/// Txid ranges (inclusive) no reader sits in: between consecutive distinct readers, and after
/// the last one. The range before the first reader is handled by the oldest-reader release.
fn reader_gaps(readers: &[TxId]) -> Vec<(TxId, TxId)> {
    let mut gaps = Vec::new();
    for w in readers.windows(2) {
        if w[1].0 > w[0].0.saturating_add(1) {
            gaps.push((TxId(w[0].0 + 1), TxId(w[1].0 - 1)));
        }
    }
    if let Some(last) = readers.last() {
        if last.0 < u64::MAX {
            gaps.push((TxId(last.0 + 1), TxId(u64::MAX)));
        }
    }
    gaps
}

#[cfg(test)]
mod tests;
