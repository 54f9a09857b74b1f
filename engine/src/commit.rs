//! The commit protocol.
//!
//! 1. Write each dirty sub-bucket (inline when small enough) and put its header into its parent;
//!    rebalance and spill the root bucket. Pages come from the freelist, else the high-water mark;
//!    a page reachable from the last durable meta is never overwritten.
//! 2. Free the old freelist page; allocate the new one (unless `no_freelist_sync`), kept as
//!    runs of free and pending pages and encoded straight into the commit buffer in step 4.
//! 3. If the high-water mark passed the file's end: `set_len`, then sync, so growth is durable
//!    before any page past the old end is referenced.
//! 4. Write the dirty pages in page order, then sync. Each run of contiguous pages goes out in
//!    one `write_at`: a run of one image from where it lies, a run of several serialised first
//!    into one buffer (sized by `Options::presize`).
//! 5. Write the meta page to slot `txid % 2`, then sync. Only now is the commit acknowledged.
//!
//! Any failure latches the database (see `db.rs`): the in-memory freelist may already hold this
//! commit's allocations, and after a failed write or sync nothing is known about the disk, so
//! the only safe continuation is to reopen and read the truth back.

use crate::arena::PageArena;
use crate::bucket::BucketTree;
use crate::cached::CachedNode;
use crate::counters::{shape, Counters};
use crate::error::{Corruption, Error, FormatError, Invariant, Result};
use crate::flush::{self, grow_to, sync, write_at, write_pages, DirtyPages, PageImage};
use crate::freelist::{FreeFilter, Freelist, FreelistKind, Taken};
use crate::guard::{self, Guard};
use crate::options::DebugHooks;
use crate::presize::SizedBuf;
use crate::spill::{self, SpillSink};
use crate::tree::{self, Reader};
use crate::tx::WriteTx;
use crashlab_format::bucket::encode_header;
use crashlab_format::corruption::FreeRefusal;
use crashlab_format::limits::MAX_FREE_IDS;
use crashlab_format::meta::{Meta, META_IMAGE_SIZE};
use crashlab_format::node::{Body, Child, LeafItem, Node};
use crashlab_format::page::{LEAF_FLAG_BUCKET, PAGE_HEADER_SIZE};
use crashlab_format::types::{PageId, PageSpan, TxId};
use freelist_page::{write_freelist, FreelistImage};
use std::ops::Range;
use std::sync::Arc;

mod freelist_page;
mod reserve;

use reserve::{Reservation, Source};

/// Collects a commit's allocations, frees and encoded pages.
struct Sink<'w> {
    freelist: &'w mut Freelist,
    txid: TxId,
    page_size: u32,
    fill_percent: f64,
    high_water: PageId,
    /// The meta page the base snapshot (and so its high-water mark) was read from.
    meta_page: PageId,
    /// The writer's page images, kept from commit to commit (`arena.rs`).
    arena: &'w mut PageArena,
    /// Each node run placed in `arena`, and where.
    dirty: &'w mut Vec<(PageId, Range<usize>)>,
    /// The writer's freelist and meta page images, kept apart from the nodes' so that each
    /// lands where the same kind of image lay in the commit before (`freelist_page.rs`).
    fixed: &'w mut PageArena,
    /// The freelist page run.
    freelist_page: Option<FreelistImage>,
    /// Bytes of `dirty` and `freelist_page`, kept as pages are added, so the commit buffer's
    /// size is known for free.
    dirty_bytes: usize,
    /// Each written node with the page it was assembled from.
    nodes: &'w mut Vec<(PageId, Arc<CachedNode>, PageId)>,
    /// Empty cache shells lent by the page cache, to wrap written nodes in (`pager.rs`).
    spare_cached: &'w mut Vec<Arc<CachedNode>>,
    /// The boxes of the nodes spilled, emptied, given back to the page cache at the end.
    #[expect(
        clippy::vec_box,
        reason = "the boxes are the allocations kept for reuse"
    )]
    spare_boxes: &'w mut Vec<Box<Node>>,
    /// Pages this commit took from the free set.
    taken: &'w mut Taken,
    /// A kept list for the free and pending runs the freelist page lists.
    free_runs: &'w mut Vec<PageSpan>,
    /// The session's damage to step around.
    guard: &'w mut Guard,
    /// The commit's counters (a reference: they are 300 bytes, and moving them in and out of
    /// the sink copied them each time).
    counters: &'w mut Counters,
    /// A negative control forgets every page this commit frees (see `DebugHooks`).
    leak_freed: bool,
    /// A negative control frees the commit's first freed span twice (see `DebugHooks`).
    double_free: bool,
    /// A negative control writes a freelist of 0xFFFF ids or more without the count escape.
    wrap_freelist_count: bool,
    /// A negative control frees only the first page of a rewritten branch (see `DebugHooks`).
    branch_first_page_only: bool,
    /// The deepest leaf spilled in the tree being spilled, levels below its old root.
    deepest_leaf: usize,
    /// The run this commit's pages come from while they fit (`commit/reserve.rs`).
    reservation: Reservation,
    /// Pages this commit allocated, which the next commit reserves.
    allocated: u64,
    /// The file's length in pages before this commit.
    file_pages: u64,
}

impl Sink<'_> {
    fn free_run(&mut self, span: PageSpan) -> Result<()> {
        // A page this commit allocated is one the freelist listed; freeing it means the tree
        // also uses it. Pending, it would be reused under the node just written there.
        if let Some(both) = self.taken.first_within(span) {
            return Err(Error::corrupted(both, Corruption::LiveListedFree));
        }
        if self.leak_freed {
            // A negative control forgets the pages (see `DebugHooks`).
            return Ok(());
        }
        match self.freelist.try_free(self.txid, span) {
            Ok(()) => {
                if std::mem::take(&mut self.double_free) {
                    return self.free_run(span);
                }
                Ok(())
            }
            // Pending under this commit's txid: freed twice by this commit, which [`commit`]
            // tells apart from a file that references the page twice.
            Err(FreeRefusal::AlreadyPending(page))
                if self.freelist.is_pending_from(self.txid, page) =>
            {
                let txid = self.txid;
                Err(Error::Invariant(Invariant::FreedTwice { txid, page }))
            }
            Err(refusal) => Err(Error::corrupted(
                refusal.page(),
                Corruption::FreedTwice { refusal },
            )),
        }
    }
}

impl Sink<'_> {
    /// Reserve `want` pages in one run (`commit/reserve.rs`): a free run of exactly that many;
    /// else the front of a long run when few idle free pages lie outside it; else, when no free
    /// run is that long and no more than `want` pages are free, at the high-water mark if the
    /// file already has room there and the run is small.
    fn reserve(&mut self, want: u64) -> Result<Option<(PageId, Source)>> {
        if let Some(id) = self.freelist.allocate_exact(self.txid, want) {
            self.taken.insert(PageSpan::new(id, want));
            return Ok(Some((id, Source::FreeSet)));
        }
        if let Some(run) = self.freelist.fit(want) {
            let idle = self.freelist.idle_outside(run, reserve::LONG_REST_MIN);
            if !reserve::takes_front_of(want, run.count, idle) {
                // Longer runs only, none long enough to split, or idle short runs holding
                // enough pages that page by page should use them.
                return Ok(None);
            }
            // The front of the run `fit` found: its rest stays one long run.
            let Some(id) = self.freelist.allocate(self.txid, want) else {
                return Ok(None);
            };
            self.taken.insert(PageSpan::new(id, want));
            return Ok(Some((id, Source::FreeSet)));
        }
        if self.freelist.free_count() > want {
            // Short runs that together could hold the commit: page by page, which uses them.
            // Passing over them again and again would grow the file and the free set without
            // bound (a stream of commits of varying size finds no run of its own length).
            return Ok(None);
        }
        let room = self.file_pages.saturating_sub(self.high_water.0);
        // A page past the mark that damage already references refuses an allocation of it;
        // the reservation steps aside, so only a page the commit needs can refuse it.
        let clear = || self.guard.check_high_water(self.high_water, want).is_ok();
        if want > reserve::HIGH_WATER_MAX || want > room || !clear() {
            return Ok(None);
        }
        let id = self.take_high_water(want)?;
        Ok(Some((id, Source::HighWater)))
    }

    /// Take `count` pages at the high-water mark.
    fn take_high_water(&mut self, count: u64) -> Result<PageId> {
        let id = self.high_water;
        self.guard.check_high_water(id, count)?;
        let overflow = Error::corrupted(self.meta_page, Corruption::HighWaterOverflow);
        self.high_water = PageId(id.0.checked_add(count).ok_or(overflow)?);
        self.freelist.record_allocation(self.txid, id);
        self.counters.high_water_allocations += count;
        Ok(id)
    }

    /// Return the reservation's unused pages to the free set: before the freelist page lists
    /// the set, or the rebuild check counts it.
    fn give_back_reserved(&mut self) {
        match self.reservation.finish() {
            None => {}
            // Nothing was taken at the mark after it: the mark goes back down.
            Some((left, Source::HighWater)) if left.end() == self.high_water => {
                self.high_water = left.start;
                self.counters.high_water_allocations -= left.count;
            }
            Some((left, _)) => self.freelist.give_back(self.txid, left),
        }
    }
}

impl SpillSink for Sink<'_> {
    fn page_size(&self) -> u32 {
        self.page_size
    }
    fn fill_percent(&self) -> f64 {
        self.fill_percent
    }
    fn allocate(&mut self, count: u64) -> Result<PageId> {
        assert!(count >= 1);
        self.allocated += count;
        if let Some(id) = self.reservation.take(count) {
            self.freelist.record_allocation(self.txid, id);
            return Ok(id);
        }
        if let Some(want) = self.reservation.ask(count) {
            if let Some((id, source)) = self.reserve(want)? {
                self.reservation.reserved(id, want, count, source);
                return Ok(id);
            }
        }
        if let Some(id) = self.freelist.allocate(self.txid, count) {
            self.taken.insert(PageSpan::new(id, count));
            return Ok(id);
        }
        self.take_high_water(count)
    }
    /// An idle free run (`Freelist::allocate_idle`), else the high-water mark; never the
    /// reservation, and not counted in what the next commit reserves: no commit after this
    /// one rewrites the piece. The short runs a once-large file keeps are used up this way for
    /// good. Page by page, commits took them for the pages the next commit rewrites, which
    /// brought them back two commits later: they went round and never went (`engine/tests/
    /// reserve.rs`, `one_key_appends_of_any_size_keep_to_one_run_on_a_once_large_file`).
    fn allocate_behind_edge(&mut self, count: u64) -> Result<PageId> {
        assert!(count >= 1);
        if let Some(id) = self.freelist.allocate_idle(
            self.txid,
            count,
            (self.reservation.size(), reserve::LONG_REST_MIN),
        ) {
            self.taken.insert(PageSpan::new(id, count));
            return Ok(id);
        }
        self.take_high_water(count)
    }
    fn free(&mut self, span: PageSpan) -> Result<()> {
        self.guard.check_free(span)?;
        self.free_run(span)
    }
    fn free_node(&mut self, span: PageSpan, branch: bool) -> Result<()> {
        if branch && self.branch_first_page_only {
            // A negative control leaks the branch's other pages (see `DebugHooks`).
            return self.free(PageSpan::new(span.start, 1));
        }
        self.free(span)
    }
    fn image(
        &mut self,
        id: PageId,
        pages: u64,
        len: usize,
        prior: Option<PageId>,
    ) -> (&mut [u8], Option<usize>) {
        self.counters.overflow_long_writes += u64::from(pages >= shape::OVERFLOW_LONG_PAGES);
        let pages = usize::try_from(pages).expect("an image fits memory");
        let over = prior.and_then(|prior| self.arena.place_over(id, prior, pages, len));
        let (range, old_len) = match over {
            Some((range, old_len)) => (range, Some(old_len)),
            None => (self.arena.place_image(id, pages, len).0, None),
        };
        self.dirty_bytes += range.len();
        self.dirty.push((id, range.clone()));
        (self.arena.run_mut(range), old_len)
    }
    fn emit(&mut self, id: PageId, node: Node, from: PageId) {
        // Wrapped once, as the page cache will hold it, in a shell it lent when it has one.
        let cached = match self.spare_cached.pop() {
            Some(mut shell) => {
                Arc::get_mut(&mut shell)
                    .expect("a spare shell is its allocation's only reference")
                    .refill(node);
                shell
            }
            None => Arc::new(CachedNode::new(node)),
        };
        self.nodes.push((id, cached, from));
    }
    fn spare(&mut self, shell: Box<Node>) {
        if self.spare_boxes.len() < crate::pager::SPARES_MAX {
            self.spare_boxes.push(shell);
        }
    }
    fn count_split(&mut self) {
        self.counters.node_splits += 1;
    }
    fn count_merge(&mut self) {
        self.counters.node_merges += 1;
    }
    fn leaf_spilled_at(&mut self, depth: usize) {
        self.deepest_leaf = self.deepest_leaf.max(depth);
    }
    fn tree_spilled(&mut self, root_splits: usize) {
        let levels = std::mem::take(&mut self.deepest_leaf) + 1 + root_splits;
        if levels as u64 >= shape::TREE_DEEP_LEVELS {
            self.counters.deep_tree_writes += 1;
        }
    }
}

impl WriteTx<'_> {
    /// Write everything and make it durable (unless `no_sync`).
    pub fn commit(mut self) -> Result<()> {
        self.finished = true;
        commit(&mut self)
    }
}

/// Make the session's guard on its first commit: one check of the whole file, whose live pages
/// listed free leave the free set at once (`guard.rs`).
fn session_guard(tx: &mut WriteTx<'_>) -> Result<()> {
    if tx.writer.guard.is_some() {
        return Ok(());
    }
    let (problems, complete) = tx.db.check_with(&tx.writer.freelist, None)?;
    let found = Guard::of(&problems, complete, tx.base.high_water, tx.base.slot())?;
    if !found.quarantined.is_empty() {
        let free = guard::minus(&tx.writer.freelist.free_spans(), &found.quarantined);
        tx.writer.freelist.init_spans(&free)?;
    }
    tx.writer.guard = Some(found);
    Ok(())
}

fn commit(tx: &mut WriteTx<'_>) -> Result<()> {
    if let Some(reason) = &tx.writer.latched {
        return Err(Error::Latched(reason.clone()));
    }
    let done = commit_inner(tx);
    tx.writer.lists.trim();
    match done {
        Ok(()) => Ok(()),
        Err(e) => {
            let e = file_or_engine(tx, e);
            // Negative controls forget to latch, always or after a refusal (see `DebugHooks`).
            let hooks = tx.db.options().hooks();
            let io = matches!(e, Error::Format(FormatError::Io { .. }));
            if !hooks.no_latch && (io || !hooks.refusal_does_not_latch) {
                tx.writer.latched = Some(e.to_string());
            }
            tx.db.count_rollback();
            Err(e)
        }
    }
}

/// A page this commit freed twice is the engine's own bug unless the file references it twice
/// (then the commit freed it once per reference, and the file is damaged): ask the file.
fn file_or_engine(tx: &WriteTx<'_>, e: Error) -> Error {
    match e {
        Error::Invariant(Invariant::FreedTwice { page, .. })
            if tx
                .db
                .file_reaches_twice(tx.base.root, tx.base.high_water, page) =>
        {
            Error::corrupted(page, Corruption::ReachedTwice { target: page })
        }
        e => e,
    }
}

fn commit_inner(tx: &mut WriteTx<'_>) -> Result<()> {
    let db = tx.db;
    let opts = db.options().clone();
    // A negative control: an engine panic at a chosen commit (see `DebugHooks`).
    let panic_at = opts.hooks().panic_in_commit_txid;
    assert!(
        panic_at == 0 || panic_at != tx.txid.0,
        "debug hook: the commit of tx {} panics",
        tx.txid
    );
    let rd = tx.reader();
    let mut counters = Counters::default();
    session_guard(tx)?;
    if opts.no_freelist_sync {
        drop_persisted_freelist(tx, &mut counters)?;
    }
    let writer = &mut *tx.writer;
    writer.arena.reset(db.pager().page_size());
    writer.fixed.reset(db.pager().page_size());
    // Kept from the last commit (which may have failed half way) for their allocations.
    let lists = &mut writer.lists;
    lists.dirty.clear();
    lists.nodes.clear();
    lists.taken.clear();
    db.pager().lend_spares(&mut lists.spare_cached);
    let mut sink = Sink {
        freelist: &mut writer.freelist,
        txid: tx.txid,
        page_size: db.pager().page_size(),
        fill_percent: opts.fill_percent,
        high_water: tx.base.high_water,
        meta_page: tx.base.slot(),
        arena: &mut writer.arena,
        dirty: &mut lists.dirty,
        fixed: &mut writer.fixed,
        freelist_page: None,
        dirty_bytes: 0,
        nodes: &mut lists.nodes,
        spare_cached: &mut lists.spare_cached,
        spare_boxes: &mut lists.spare_boxes,
        taken: &mut lists.taken,
        free_runs: &mut lists.free_runs,
        guard: writer.guard.as_mut().expect("session_guard made it"),
        counters: &mut counters,
        leak_freed: opts.hooks().leak_freed_pages,
        double_free: opts.hooks().double_free_in_commit,
        wrap_freelist_count: opts.hooks().freelist_count_wraps,
        branch_first_page_only: opts.hooks().branch_frees_first_page,
        deepest_leaf: 0,
        reservation: Reservation::new(lists.reserve),
        allocated: 0,
        file_pages: writer.file_len / u64::from(db.pager().page_size()),
    };
    for span in tx.freed.drain(..) {
        sink.free(span)?;
    }
    commit_children(&mut tx.root, &rd, &mut sink)?;
    rebalance(&mut tx.root, &rd, &mut sink)?;
    let root_tree = std::mem::replace(&mut tx.root.root, Child::Page(tx.base.root));
    let root = spill::spill_root(root_tree, &mut sink, tx.base.root)?;

    if let Some(old) = writer.freelist_span.take() {
        // A negative control frees only the first page of a list a commit drops (see
        // `DebugHooks`).
        let first_only = opts.no_freelist_sync && opts.hooks().dropped_freelist_frees_first_page;
        sink.free(if first_only {
            PageSpan::new(old.start, 1)
        } else {
            old
        })?;
    }
    if opts.hooks().free_referenced_child {
        free_referenced_child(&mut sink)?;
    }
    // Every page is freed now: nothing written may still point at one.
    check_references(&sink)?;
    let freelist_page = if opts.no_freelist_sync {
        sink.give_back_reserved();
        refuse_unloadable_rebuild(sink.freelist)?;
        PageId::NO_FREELIST
    } else {
        let span = write_freelist(&mut sink)?;
        writer.freelist_span = Some(span);
        span.start
    };
    let meta = Meta {
        page_size: sink.page_size,
        flags: 0,
        root,
        sequence: tx.root.sequence,
        freelist: freelist_page,
        high_water: sink.high_water,
        txid: tx.txid,
    };

    let Sink {
        arena,
        dirty,
        fixed,
        freelist_page,
        dirty_bytes,
        nodes,
        spare_boxes,
        counters,
        freelist,
        allocated,
        ..
    } = sink;
    let storage = db.pager().storage();
    let needed = meta.high_water.0 * u64::from(meta.page_size);
    if needed > writer.file_len {
        let len = grow_to(needed);
        storage.set_len(len).map_err(|e| Error::io("set_len", e))?;
        sync(storage, &opts, counters)?;
        writer.file_len = len;
        counters.file_growths += 1;
        counters.step_growths += u64::from(len > shape::GROWTH_STEP);
    }
    let images = arena.bytes();
    let encode_long = |buf: &mut SizedBuf| {
        if let Some(FreelistImage::Encoded(list)) = &freelist_page {
            list.encode(buf);
        }
    };
    let mut pages = flush::recycle(std::mem::take(&mut lists.pages));
    pages.extend(
        dirty
            .iter()
            .map(|(id, at)| (*id, PageImage::placed(images, at.clone()))),
    );
    pages.extend(freelist_page.as_ref().map(|image| match image {
        FreelistImage::Placed {
            start,
            at,
            after_nodes,
        } => {
            let arena = if *after_nodes { images } else { fixed.bytes() };
            (*start, PageImage::placed(arena, at.clone()))
        }
        FreelistImage::Encoded(list) => {
            let encode: &(dyn Fn(&mut SizedBuf) + Sync) = &encode_long;
            let len = list.len();
            (list.start, PageImage::Encoded { len, encode })
        }
    }));
    let dirty_pages = DirtyPages {
        pages: &mut pages,
        bytes: dirty_bytes,
        runs: &mut lists.runs,
    };
    write_pages(storage, meta.page_size, dirty_pages, opts.presize, counters)?;
    lists.pages = flush::recycle(pages);
    if !tx.skip_data_sync {
        sync(storage, &opts, counters)?;
    }
    // Refused (nothing written yet) if decoding would reject it; begin_write already refused a
    // txid that would wrap, and the meta must still follow its base.
    assert!(meta.txid > tx.base.txid, "commit txid follows its base");
    let (_, meta_page) = fixed.place(1, META_IMAGE_SIZE);
    meta.encode_page_checked_into(tx.base.slot(), meta_page, opts.checksum_rule())?;
    if opts.hooks().page_size_16_bits {
        narrow_page_size(&meta, meta_page);
    }
    write_at(
        storage,
        meta_slot(&meta, &opts),
        meta.page_size,
        meta_page,
        counters,
    )?;
    counters.meta_writes += 1;
    counters.image_bytes_zeroed += arena.take_zeroed() + fixed.take_zeroed();
    arena.trim();
    fixed.trim();
    sync(storage, &opts, counters)?;

    let written = nodes.drain(..).map(|(id, node, _)| (id, node));
    db.pager().publish(written, spare_boxes);
    // Its pages hold the images now: the next commit may rewrite them in place.
    arena.complete();
    lists.reserve = allocated;
    counters.commits += 1;
    db.finish_commit(meta, counters, freelist.counters());
    Ok(())
}

/// The first commit that drops a persisted freelist (`no_freelist_sync` on a file whose meta
/// has one) leaves the next open to rebuild the free set by walking every bucket, which a commit
/// that keeps the freelist never needs. So that commit walks first, as that open will: if the
/// walk fails (damage the earlier open never read), the commit is refused with the walk's own
/// error rather than leave a file that opened before and does not open after. If it succeeds,
/// its free set replaces the loaded one, since it is what the next open will use.
fn drop_persisted_freelist(tx: &mut WriteTx<'_>, counters: &mut Counters) -> Result<()> {
    let writer = &mut *tx.writer;
    let Some(span) = writer.freelist_span else {
        return Ok(());
    };
    assert!(
        tx.base.has_freelist(),
        "a freelist span means a persisted freelist"
    );
    let pending = writer.freelist.pending_ids();
    let pager = tx.db.pager();
    let free = crate::rebuild::free_after_dropping(pager, &tx.base, span, &pending, counters)?;
    // The array freelist refuses past its limit, as the next open would.
    writer.freelist.init_spans(&free)
}

/// Without a persisted freelist the next open rebuilds the free set, and finds exactly this
/// commit's free and pending pages (the set is exact: rebuilt at open, or by
/// [`drop_persisted_freelist`]). The array freelist holds one id per page and refuses past
/// [`MAX_FREE_IDS`]; a commit that would leave more must not return Ok, or the file would no
/// longer open with the options that wrote it.
fn refuse_unloadable_rebuild(freelist: &Freelist) -> Result<()> {
    let count = freelist.free_count() + freelist.pending_count();
    if freelist.kind() == FreelistKind::Array && count > MAX_FREE_IDS {
        return Err(Error::Format(FormatError::TooManyFreeIds {
            what: "array freelist",
            count,
            max: MAX_FREE_IDS,
        }));
    }
    Ok(())
}

/// Pair check on what this commit writes: no written node references a page that is free or
/// that this commit freed. On a consistent tree none does; a damaged one that reaches a page by
/// two paths would otherwise keep the one this transaction did not rewrite pointing at a page
/// that the next commits reuse.
fn check_references(sink: &Sink<'_>) -> Result<()> {
    // Most references are to pages that are certainly not free: the filter says so at once.
    // Its kind is matched here, once, so that each reference costs only its own test.
    let held = |id| sink.freelist.is_free_or_pending(id);
    match sink.freelist.filter() {
        FreeFilter::Pages(bits) => references_to_free(sink, |id| bits.may_hold(id) && held(id)),
        FreeFilter::Runs(runs) => references_to_free(sink, |id| runs.may_hold(id) && held(id)),
        FreeFilter::All => references_to_free(sink, held),
    }
}

/// The negative control `DebugHooks::free_referenced_child`: free a page child of a branch
/// this commit writes, one the commit does not rewrite (so the branch still points at it).
fn free_referenced_child(sink: &mut Sink<'_>) -> Result<()> {
    let written = |id: PageId| sink.nodes.iter().any(|(at, _, _)| *at == id);
    let child = sink.nodes.iter().find_map(|(_, node, _)| match &node.body {
        Body::Branch(items) => items.iter().find_map(|it| match it.child {
            Child::Page(id) if !written(id) => Some(id),
            _ => None,
        }),
        Body::Leaf(_) => None,
    });
    match child {
        Some(id) => sink.free(PageSpan::new(id, 1)),
        None => Ok(()),
    }
}

/// Refuse the commit if a node it writes references a page `is_free` says is free or pending.
fn references_to_free(sink: &Sink<'_>, is_free: impl Fn(PageId) -> bool) -> Result<()> {
    for (_, node, from) in sink.nodes.iter() {
        let refused = |child| Error::corrupted(*from, Corruption::ReferenceToFreePage { child });
        match &node.body {
            Body::Branch(items) => {
                for it in items {
                    if let Child::Page(child) = it.child {
                        if is_free(child) {
                            return Err(refused(child));
                        }
                    }
                }
            }
            Body::Leaf(items) => {
                for it in items.iter().filter(|it| it.is_bucket()) {
                    // A bucket value holds its root page first (0 for an inline bucket).
                    let root = PageId(crashlab_format::page::read_u64(it.value(), 0));
                    if root.0 != 0 && is_free(root) {
                        return Err(refused(root));
                    }
                }
            }
        }
    }
    Ok(())
}

/// Write every dirty child bucket of `t` and put its new header into `t`'s tree.
fn commit_children(t: &mut BucketTree, rd: &Reader<'_>, sink: &mut Sink<'_>) -> Result<()> {
    let children = std::mem::take(&mut t.children);
    for (name, mut child) in children {
        if !child.is_dirty() {
            continue;
        }
        let value = commit_bucket(&mut child, rd, sink)?;
        tree::with_leaf(&mut t.root, t.home, &name, rd, &mut t.hint, |items, _| {
            match items.search(&name) {
                Ok(i) => items.set_value(i, &value),
                Err(i) => items.insert(i, LeafItem::new(LEAF_FLAG_BUCKET, &name, &value)),
            }
            Ok(())
        })?;
        t.dirty = true;
    }
    Ok(())
}

/// Rebalance `t`'s tree if a delete went down it in this transaction (`BucketTree::removed`):
/// without one no node can be underfull, and the pass would only walk the written branches.
fn rebalance(t: &mut BucketTree, rd: &Reader<'_>, sink: &mut Sink<'_>) -> Result<()> {
    if !t.removed {
        // The rule's premise: nothing but a removal (or a merge) marks a node, and no bytes
        // read do (`Node::built`, decoding).
        debug_assert!(
            !marked_unbalanced(&t.root),
            "a node marked without a delete"
        );
        return Ok(());
    }
    spill::rebalance(&mut t.root, rd, sink)
}

/// Whether an owned node under `root` is marked unbalanced (checked in debug builds only).
fn marked_unbalanced(root: &Child) -> bool {
    let Child::Node(n) = root else {
        return false;
    };
    n.unbalanced
        || match &n.body {
            Body::Branch(items) => items.iter().any(|it| marked_unbalanced(&it.child)),
            Body::Leaf(_) => false,
        }
}

/// Write one bucket (children first) and return its header value for the parent.
fn commit_bucket(t: &mut BucketTree, rd: &Reader<'_>, sink: &mut Sink<'_>) -> Result<Vec<u8>> {
    commit_children(t, rd, sink)?;
    rebalance(t, rd, sink)?;
    if let Child::Node(n) = &t.root {
        if inlineable(n, sink.page_size, &rd.debug) {
            if let Some(span) = n.origin {
                sink.free(span)?;
            }
            // The inline image is checked as a spilled page is: one that decoding would reject
            // (a damaged tree merged out of order) fails the commit instead of being written.
            let page = n.read_from.unwrap_or(t.home);
            return encode_header(PageId(0), t.sequence, Some(n))
                .map_err(|reason| Error::corrupted(page, reason));
        }
    }
    let root = std::mem::replace(&mut t.root, Child::Page(PageId(0)));
    let id = spill::spill_root(root, sink, t.home)?;
    encode_header(id, t.sequence, None).map_err(|reason| Error::corrupted(t.home, reason))
}

/// A negative control's encoder (`DebugHooks::page_size_16_bits`): the meta in `page` written
/// again with 16 bits of its page size, checksummed as written; the commit's own meta (in
/// memory) keeps the real size.
fn narrow_page_size(meta: &Meta, page: &mut [u8]) {
    let narrow = Meta {
        page_size: u32::from(meta.page_size as u16),
        ..*meta
    };
    page[PAGE_HEADER_SIZE..META_IMAGE_SIZE].copy_from_slice(&narrow.encode());
}

/// bbolt's rule: a leaf root with no sub-buckets whose page image fits in a quarter page
/// (two negative controls break it, see `DebugHooks`).
fn inlineable(n: &Node, page_size: u32, debug: &DebugHooks) -> bool {
    let limit = page_size as usize / if debug.inline_up_to_half_page { 2 } else { 4 };
    match &n.body {
        Body::Leaf(items) => {
            let holds_bucket =
                !debug.inline_keeps_sub_buckets && items.iter().any(LeafItem::is_bucket);
            !holds_bucket && n.size() <= limit
        }
        Body::Branch(_) => false,
    }
}

/// The page a commit's meta goes to: slot `txid % 2`, so the other slot keeps the last durable
/// meta — unless a negative control pins every commit to slot 0.
fn meta_slot(meta: &Meta, opts: &crate::Options) -> PageId {
    if opts.hooks().meta_same_slot {
        PageId(0)
    } else {
        meta.slot()
    }
}
