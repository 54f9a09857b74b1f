//! Unit tests of the shared bookkeeping: pending, release by horizon and by reader gaps,
//! rollback, reload. Expected values are worked out by hand from the rules in the docs.

use super::*;

const KINDS: [FreelistKind; 2] = [FreelistKind::Array, FreelistKind::Hashmap];

fn ids(v: &[u64]) -> Vec<PageId> {
    v.iter().copied().map(PageId).collect()
}

fn tx(v: u64) -> TxId {
    TxId(v)
}

fn span(start: u64, count: u64) -> PageSpan {
    PageSpan::new(PageId(start), count)
}

fn with_free(kind: FreelistKind, free: &[u64]) -> Freelist {
    let mut f = Freelist::new(kind);
    f.init(&ids(free));
    f
}

#[test]
fn is_send_sync_debug() {
    fn check<T: Send + Sync + std::fmt::Debug>() {}
    check::<Freelist>();
}

#[test]
fn array_bbolt_vector_through_the_freelist() {
    let mut f = with_free(FreelistKind::Array, &[3, 4, 5, 6, 7, 9, 12, 13, 18]);
    let t = tx(1);
    let got: Vec<Option<u64>> = [3, 1, 3, 2, 1, 0, 0]
        .iter()
        .map(|&n| f.allocate(t, n).map(|p| p.0))
        .collect();
    assert_eq!(got, [Some(3), Some(6), None, Some(12), Some(7), None, None]);
    assert_eq!(f.free_ids(), ids(&[9, 18]));
    let got: Vec<Option<u64>> = [1, 1, 1]
        .iter()
        .map(|&n| f.allocate(t, n).map(|p| p.0))
        .collect();
    assert_eq!(got, [Some(9), Some(18), None]);
    assert_eq!(f.free_ids(), ids(&[]));
    assert_eq!(f.counters().allocate_calls, 10);
    f.verify();
}

#[test]
fn hashmap_bbolt_vector_through_the_freelist() {
    let mut f = with_free(FreelistKind::Hashmap, &[3, 4, 5, 6, 7, 9, 12, 13, 18]);
    // Worked in hashmap.rs: 3 (best fit from 3+5), 6 (lowest 2-span), 9 (lowest 1-span).
    let mut counts = Vec::new();
    for (n, want) in [(3, Some(3)), (2, Some(6)), (1, Some(9)), (0, None)] {
        assert_eq!(f.allocate(tx(1), n), want.map(PageId), "alloc({n})");
        counts.push(f.free_count());
    }
    assert_eq!(counts, [6, 4, 3, 3]);
    assert_eq!(f.free_ids(), ids(&[12, 13, 18]));
    // alloc(3): 2 probes; alloc(2), alloc(1): 1 each; alloc(0): none. Index entries moved:
    // the split of span 3..=7 removes one and adds the remainder (2), each exact fit removes one.
    assert_eq!(
        f.counters(),
        FreelistCounters {
            allocate_calls: 4,
            allocate_scan_steps: 4,
            ids_moved: 4
        }
    );
}

#[test]
fn freed_pages_wait_in_pending_then_release_without_readers() {
    for kind in KINDS {
        let mut f = with_free(kind, &[10]);
        f.free(tx(3), span(4, 3));
        f.free(tx(3), span(8, 1));
        assert_eq!(f.pending_ids(), ids(&[4, 5, 6, 8]));
        assert_eq!(f.free_ids(), ids(&[10]));
        assert_eq!(f.all_ids(), ids(&[4, 5, 6, 8, 10]));
        assert_eq!((f.free_count(), f.pending_count()), (1, 4));
        f.release_pending(&[]);
        assert_eq!(f.free_ids(), ids(&[4, 5, 6, 8, 10]));
        assert_eq!(f.pending_count(), 0);
        f.verify();
    }
}

#[test]
fn release_by_horizon_holds_lists_freed_at_or_after_the_oldest_reader() {
    for kind in KINDS {
        let mut f = Freelist::new(kind);
        f.free(tx(3), span(20, 1));
        f.free(tx(5), span(21, 1));
        f.free(tx(7), span(22, 1));
        // Oldest reader 5: tx 3's pages go; tx 5's are held (conservative by one: reader 5 could
        // not see them, bbolt holds them anyway); tx 7 is after the reader, allocation unknown.
        f.release_pending(&[tx(5)]);
        assert_eq!(f.free_ids(), ids(&[20]));
        assert_eq!(f.pending_ids(), ids(&[21, 22]));
        f.release_pending(&[tx(6)]);
        assert_eq!(f.free_ids(), ids(&[20, 21]));
        f.release_pending(&[]);
        assert_eq!(f.free_ids(), ids(&[20, 21, 22]));
        f.verify();
    }
}

/// Pages allocated (from the free set) by `alloc_tx` and freed by `free_tx`, one page each.
fn lifetime(f: &mut Freelist, alloc_tx: u64, free_tx: u64) -> PageId {
    let page = f
        .allocate(tx(alloc_tx), 1)
        .expect("test seeds enough free pages");
    f.free(tx(free_tx), PageSpan::new(page, 1));
    page
}

#[test]
fn release_by_gaps_between_readers() {
    for kind in KINDS {
        let mut f = with_free(kind, &(100..120).collect::<Vec<_>>());
        // Readers 4 and 10 (duplicated): gaps are 5..=9 and 11..=MAX.
        let in_gap = lifetime(&mut f, 5, 6); // 100: both in 5..=9 -> released
        let before = lifetime(&mut f, 3, 6); // 101: allocated before reader 4 -> held
        let spans_reader = lifetime(&mut f, 9, 11); // 102: reader 10 in between -> held
        let at_reader = lifetime(&mut f, 10, 12); // 103: allocated at reader 10 -> held
        let after = lifetime(&mut f, 11, 12); // 104: both in 11.. -> released
        let freed_at_reader = lifetime(&mut f, 10, 10); // 105: freed by tx 10 -> held
        f.free(tx(7), span(50, 2)); // allocation unknown -> held
        assert_eq!(f.free_count(), 20 - 6);
        f.release_pending(&[tx(4), tx(4), tx(10), tx(10)]);
        let held = vec![
            PageId(50),
            PageId(51),
            before,
            spans_reader,
            at_reader,
            freed_at_reader,
        ];
        assert_eq!(f.pending_ids(), held);
        let mut want_free: Vec<PageId> = (106..120).map(PageId).collect();
        want_free.extend([in_gap, after]);
        want_free.sort();
        assert_eq!(f.free_ids(), want_free);
        f.verify();
        // Reader 4 leaves: oldest is now 10, so everything freed before 10 goes (101, 50, 51);
        // 102 and 103 were allocated at or before reader 10, 105 was freed by tx 10: held.
        f.release_pending(&[tx(10)]);
        assert_eq!(
            f.pending_ids(),
            vec![spans_reader, at_reader, freed_at_reader]
        );
        f.verify();
    }
}

#[test]
fn high_water_allocations_qualify_once_recorded() {
    for kind in KINDS {
        let mut f = Freelist::new(kind);
        f.record_allocation(tx(6), PageId(30));
        f.free(tx(7), span(30, 3));
        f.free(tx(7), span(40, 1)); // never recorded
        f.release_pending(&[tx(5)]);
        assert_eq!(
            f.free_ids(),
            ids(&[30, 31, 32]),
            "whole span inherits alloc tx 6"
        );
        assert_eq!(f.pending_ids(), ids(&[40]));
    }
}

#[test]
fn rollback_restores_alloc_records_of_freed_pages() {
    for kind in KINDS {
        let mut f = with_free(kind, &[60, 61]);
        let page = f.allocate(tx(5), 2).unwrap();
        assert_eq!(page, PageId(60));
        f.free(tx(7), PageSpan::new(page, 2));
        f.rollback(tx(7));
        assert_eq!(f.pending_count(), 0);
        assert_eq!(f.free_count(), 0);
        // Freed again by tx 8: if the record of tx 5 was restored, reader 4's gap releases it.
        f.free(tx(8), PageSpan::new(page, 2));
        f.release_pending(&[tx(4)]);
        assert_eq!(f.free_ids(), ids(&[60, 61]));
        f.verify();
    }
}

#[test]
fn rollback_drops_own_allocations_and_keeps_them_out_of_the_free_set() {
    for kind in KINDS {
        let mut f = with_free(kind, &[60, 70]);
        let a = f.allocate(tx(9), 1).unwrap();
        f.record_allocation(tx(9), PageId(80));
        f.free(tx(9), span(90, 1));
        f.rollback(tx(9));
        assert_eq!(f.free_ids(), ids(&[70]), "allocated page not returned");
        assert_eq!(f.pending_count(), 0);
        // Freed later, their allocating tx is unknown: held while any reader is open.
        f.free(tx(10), PageSpan::new(a, 1));
        f.free(tx(10), span(80, 1));
        f.release_pending(&[tx(4)]);
        assert_eq!(f.pending_ids(), vec![a, PageId(80)]);
    }
}

#[test]
fn reload_keeps_pending_out_of_the_free_set() {
    for kind in KINDS {
        let mut f = with_free(kind, &[3, 4]);
        f.free(tx(5), span(10, 2));
        f.allocate(tx(5), 2);
        // The persisted page (before tx 5) listed 3, 4 and an older pending 10 as free.
        f.reload(&ids(&[3, 4, 10, 20]));
        assert_eq!(f.free_ids(), ids(&[3, 4, 20]));
        assert_eq!(f.pending_ids(), ids(&[10, 11]));
        f.verify();
    }
}

#[test]
#[should_panic(expected = "meta page 1")]
fn freeing_a_meta_page_panics() {
    Freelist::new(FreelistKind::Array).free(tx(2), span(1, 2));
}

#[test]
#[should_panic(expected = "page 5 already freed (it is pending)")]
fn double_free_panics() {
    let mut f = Freelist::new(FreelistKind::Hashmap);
    f.free(tx(2), span(4, 2));
    f.free(tx(3), span(5, 1));
}

#[test]
#[should_panic(expected = "page 9 already freed (it is free)")]
fn freeing_a_free_page_panics() {
    for kind in KINDS {
        let mut f = with_free(kind, &[9]);
        f.free(tx(2), span(8, 2));
    }
}

#[test]
#[should_panic(expected = "strictly ascending")]
fn init_rejects_unsorted_ids() {
    with_free(FreelistKind::Array, &[25, 5]);
}

/// The filter a commit's reference check asks first never hides a free or pending page, for
/// either kind, whether it holds every page (few), the pending pages and the free runs (many
/// pages in few runs: a database that was once large), or lets everything through (many
/// runs); and the first two do filter out pages that are neither.
#[test]
fn the_filter_never_hides_a_free_or_pending_page() {
    // (free runs, pages per run): few pages; many pages in few runs; many runs.
    let shapes: [(u64, u64); 3] = [(4, 3), (5, 100_000), (filter::MAX_RUNS as u64 + 1, 5)];
    for kind in KINDS {
        for (runs, len) in shapes {
            let mut f = Freelist::new(kind);
            let free: Vec<PageSpan> = (0..runs).map(|i| span(100 + i * (len + 7), len)).collect();
            f.init_runs(&free);
            let pending = f.allocate(tx(9), 2).expect("a free run of two");
            f.free(tx(9), span(pending.0, 2));
            let filter = f.filter();
            let end = free.last().unwrap().end().0 + 10;
            let mut hidden_neither = 0;
            for id in (2..end).map(PageId) {
                let held = f.is_free_or_pending(id);
                assert!(
                    !held || filter.may_hold(id),
                    "{kind:?} {runs}×{len}: page {} hidden",
                    id.0
                );
                hidden_neither += u64::from(!held && !filter.may_hold(id));
            }
            let passes_all = runs > filter::MAX_RUNS as u64;
            assert_eq!(
                hidden_neither == 0,
                passes_all,
                "{kind:?} {runs}×{len}: {hidden_neither}"
            );
        }
    }
}

#[test]
fn give_back_returns_unused_pages_free_and_joins_their_neighbours() {
    for kind in KINDS {
        let mut f = with_free(kind, &[3, 4, 5, 6, 7, 9]);
        let start = f.allocate(tx(5), 5).unwrap();
        assert_eq!(start, PageId(3));
        f.record_allocation(tx(5), PageId(4));
        // Pages 3 and 4 used, 5..8 never written: back to the free set, not pending.
        f.give_back(tx(5), span(5, 3));
        assert_eq!(f.free_ids(), ids(&[5, 6, 7, 9]), "{kind:?}");
        assert_eq!(f.pending_count(), 0);
        // Freeing a used page later still finds the allocation recorded for it.
        f.free(tx(6), span(4, 1));
        f.release_pending(&[]);
        assert_eq!(f.free_ids(), ids(&[4, 5, 6, 7, 9]), "{kind:?}");
        f.verify();
    }
}

#[test]
#[should_panic(expected = "gave back a free or pending page")]
fn give_back_of_a_free_page_is_a_programmer_error() {
    let mut f = with_free(FreelistKind::Array, &[3, 4]);
    f.give_back(tx(2), span(4, 1));
}

#[test]
fn take_exact_takes_only_a_run_of_that_length_and_fit_names_allocates_run() {
    for kind in KINDS {
        let mut f = with_free(kind, &[3, 4, 5, 6, 7, 10, 11, 20, 21, 22]);
        assert_eq!(f.allocate_exact(tx(5), 4), None, "{kind:?}: no run of four");
        assert_eq!(f.free_count(), 10, "a miss takes nothing");
        assert_eq!(f.allocate_exact(tx(5), 3), Some(PageId(20)), "{kind:?}");
        assert_eq!(f.free_ids(), ids(&[3, 4, 5, 6, 7, 10, 11]), "{kind:?}");
        // First fit (array) takes from the lowest run of two or more; best fit (hashmap) from
        // the shortest.
        let expected = match kind {
            FreelistKind::Array => Some(5),
            FreelistKind::Hashmap => Some(2),
        };
        let expected_start = match kind {
            FreelistKind::Array => 3,
            FreelistKind::Hashmap => 10,
        };
        assert_eq!(
            f.fit(2).map(|r| r.start.0),
            Some(expected_start),
            "{kind:?}"
        );
        assert_eq!(f.fit(2).map(|r| r.count), expected, "{kind:?}");
        assert_eq!(f.fit(6), None, "{kind:?}");
        f.verify();
    }
}

/// Pages the release at a write tx's start brought back in short runs are not idle; every other
/// free page outside the run is, whichever release freed it, and so is a long released run.
#[test]
fn idle_outside_leaves_out_the_short_runs_the_last_release_brought_back() {
    for kind in KINDS {
        let mut f = with_free(kind, &[3, 4, 5, 6, 7, 8, 9, 10]);
        // Tx 2 frees 20 and 30, released as tx 3 begins; tx 3 frees 31, released as tx 4 does.
        f.free(tx(2), span(20, 1));
        f.free(tx(2), span(30, 1));
        f.release_pending(&[]);
        f.free(tx(3), span(31, 1));
        f.release_pending(&[]);
        let run = span(3, 8);
        assert_eq!(f.fit(4), Some(run), "{kind:?}");
        assert_eq!(f.idle_outside(run, 4), 2, "{kind:?}: 20 and 30, not 31");
        assert_eq!(
            f.idle_outside(run, 1),
            3,
            "{kind:?}: no released run is short"
        );
        // Taken since the release (30 and 31, one run), a page is neither free nor idle.
        let mut taken = f.clone();
        assert_eq!(taken.allocate_exact(tx(4), 2), Some(PageId(30)), "{kind:?}");
        assert_eq!(taken.idle_outside(run, 4), 1, "{kind:?}: 20");
        // A released page inside the run counts neither way; a released run of four pages is
        // short under 5 and a generation under 4.
        f.free(tx(4), span(11, 1));
        f.free(tx(4), span(40, 4));
        f.release_pending(&[]);
        let run = span(3, 9);
        assert_eq!(f.fit(5), Some(run), "{kind:?}");
        assert_eq!(f.idle_outside(run, 5), 3, "{kind:?}: 20, 30 and 31");
        assert_eq!(f.idle_outside(run, 4), 7, "{kind:?}: and 40 to 43");
    }
}

/// The idle-run search looks at the lowest `IDLE_SCAN_MAX` runs and no further, however many
/// the set holds: 200 free pages two apart are 200 runs of one page.
#[test]
fn the_idle_run_search_visits_at_most_its_bound() {
    let scattered: Vec<u64> = (0..200).map(|i| 10 + 2 * i).collect();
    for kind in KINDS {
        let f = with_free(kind, &scattered);
        let mut visits = 0;
        let none = f.free.get().lowest_run_where(IDLE_SCAN_MAX, &mut |_| {
            visits += 1;
            false
        });
        assert_eq!((none, visits), (None, IDLE_SCAN_MAX), "{kind:?}");
        visits = 0;
        let tenth = f.free.get().lowest_run_where(IDLE_SCAN_MAX, &mut |run| {
            visits += 1;
            run.start == PageId(28)
        });
        assert_eq!((tenth, visits), (Some(span(28, 1)), 10), "{kind:?}");
        // Through allocate_idle: two pages fit no run, so all 64 are looked at, and the
        // fallback (a run of 2 + 0 pages) finds none either.
        let mut g = f.clone();
        let before = g.counters().allocate_scan_steps;
        assert_eq!(g.allocate_idle(tx(1), 2, (0, 0)), None, "{kind:?}");
        assert_eq!(g.counters().allocate_scan_steps - before, 64, "{kind:?}");
    }
}
