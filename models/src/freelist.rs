//! The obvious freelist: sets and maps, every answer recomputed the slow way.
//!
//! It mirrors the engine's `Freelist` with plain `u64` page and transaction ids. It knows both
//! allocation choices (array: lowest first fit; hashmap: exact fit, else best fit, lowest start
//! first) by looking at the free set directly, and releases pending pages by asking of each page
//! "could any open reader see it?" rather than by walking reader gaps as the engine does.
//!
//! Release rule: a page freed by tx F and allocated by tx A (0 = unknown) is released when every
//! open reader is newer than F, or when A is known and no open reader r has A <= r <= F.

use std::collections::{BTreeMap, BTreeSet};

/// A freed page's allocating txid; 0 means unknown.
type AllocTx = u64;

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FreelistModel {
    free: BTreeSet<u64>,
    /// freeing txid -> page -> allocating txid
    pending: BTreeMap<u64, BTreeMap<u64, AllocTx>>,
    /// first page of an allocation -> allocating txid
    allocs: BTreeMap<u64, u64>,
}

impl FreelistModel {
    pub fn new() -> FreelistModel {
        FreelistModel::default()
    }

    /// Replace the free set; pending is kept.
    pub fn init(&mut self, free: &[u64]) {
        assert!(free.iter().all(|id| *id >= 2 && !self.is_pending(*id)));
        self.free = free.iter().copied().collect();
        assert_eq!(self.free.len(), free.len(), "duplicate ids");
    }

    /// Free = `ids` minus pending.
    pub fn reload(&mut self, ids: &[u64]) {
        let free: Vec<u64> = ids
            .iter()
            .copied()
            .filter(|id| !self.is_pending(*id))
            .collect();
        self.init(&free);
    }

    /// What a reopened database starts from: everything free or pending becomes free, and
    /// nothing else is remembered.
    pub fn reopened(&self) -> FreelistModel {
        let mut fresh = FreelistModel::new();
        fresh.init(&self.all_ids());
        fresh
    }

    pub fn is_free(&self, id: u64) -> bool {
        self.free.contains(&id)
    }

    pub fn is_pending(&self, id: u64) -> bool {
        self.pending.values().any(|pages| pages.contains_key(&id))
    }

    /// Maximal runs of free pages as `(start, len)`, ascending.
    pub fn spans(&self) -> Vec<(u64, u64)> {
        let mut spans: Vec<(u64, u64)> = Vec::new();
        for &id in &self.free {
            match spans.last_mut() {
                Some((start, len)) if *start + *len == id => *len += 1,
                _ => spans.push((id, 1)),
            }
        }
        spans
    }

    /// Array choice: the lowest page starting `n` consecutive free pages.
    pub fn first_fit(&self, n: u64) -> Option<u64> {
        if n == 0 {
            return None;
        }
        self.free
            .iter()
            .copied()
            .find(|&s| (s..s + n).all(|id| self.is_free(id)))
    }

    /// Hashmap choice: the lowest start of a run of exactly `n`, else the lowest start among the
    /// runs of the smallest length above `n`.
    pub fn best_fit(&self, n: u64) -> Option<u64> {
        if n == 0 {
            return None;
        }
        let spans = self.spans();
        if let Some((start, _)) = spans.iter().find(|(_, len)| *len == n) {
            return Some(*start);
        }
        let smallest = spans
            .iter()
            .map(|(_, len)| *len)
            .filter(|len| *len > n)
            .min()?;
        spans
            .iter()
            .find(|(_, len)| *len == smallest)
            .map(|(start, _)| *start)
    }

    /// Take `start..start+n` for tx `txid`; panics unless all of it is free.
    pub fn allocate_at(&mut self, txid: u64, start: u64, n: u64) {
        for id in start..start + n {
            assert!(self.free.remove(&id), "page {id} allocated but not free");
        }
        self.allocs.insert(start, txid);
    }

    /// Record an allocation from the high-water mark.
    pub fn record_allocation(&mut self, txid: u64, start: u64) {
        self.allocs.insert(start, txid);
    }

    /// Tx `txid` frees `start..start+count`; each page inherits the record of `start`.
    pub fn free(&mut self, txid: u64, start: u64, count: u64) {
        let alloc_tx = self.allocs.remove(&start).unwrap_or(0);
        for id in start..start + count {
            assert!(
                id >= 2 && !self.is_free(id) && !self.is_pending(id),
                "bad free of {id}"
            );
            self.pending.entry(txid).or_default().insert(id, alloc_tx);
        }
    }

    /// Release every pending page no open reader could still see.
    pub fn release_pending(&mut self, readers: &[u64]) {
        let mut released = Vec::new();
        for (&freed_by, pages) in &self.pending {
            for (&id, &alloc_tx) in pages {
                if releasable(readers, freed_by, alloc_tx) {
                    released.push((freed_by, id));
                }
            }
        }
        for (freed_by, id) in released {
            let pages = self.pending.get_mut(&freed_by).expect("listed above");
            pages.remove(&id);
            self.free.insert(id);
        }
        self.pending.retain(|_, pages| !pages.is_empty());
    }

    /// Forget what `txid` freed (restoring the allocation records of those pages) and the
    /// allocations it made.
    pub fn rollback(&mut self, txid: u64) {
        for (id, alloc_tx) in self.pending.remove(&txid).unwrap_or_default() {
            if alloc_tx != 0 {
                self.allocs.insert(id, alloc_tx);
            }
        }
        self.allocs.retain(|_, by| *by != txid);
    }

    pub fn free_ids(&self) -> Vec<u64> {
        self.free.iter().copied().collect()
    }

    pub fn pending_ids(&self) -> Vec<u64> {
        let all: BTreeSet<u64> = self
            .pending
            .values()
            .flat_map(|p| p.keys().copied())
            .collect();
        all.into_iter().collect()
    }

    pub fn all_ids(&self) -> Vec<u64> {
        let mut all: BTreeSet<u64> = self.free.clone();
        all.extend(self.pending_ids());
        all.into_iter().collect()
    }

    pub fn free_count(&self) -> u64 {
        self.free.len() as u64
    }

    pub fn pending_count(&self) -> u64 {
        self.pending.values().map(|p| p.len() as u64).sum()
    }
}

/// The release rule of the module docs.
fn releasable(readers: &[u64], freed_by: u64, alloc_tx: AllocTx) -> bool {
    if readers.iter().all(|r| *r > freed_by) {
        return true;
    }
    let (low, high) = (alloc_tx.min(freed_by), alloc_tx.max(freed_by));
    alloc_tx != 0 && !readers.iter().any(|r| low <= *r && *r <= high)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model(free: &[u64]) -> FreelistModel {
        let mut m = FreelistModel::new();
        m.init(free);
        m
    }

    #[test]
    fn fits() {
        let m = model(&[3, 4, 5, 6, 7, 9, 12, 13, 18]);
        assert_eq!(m.first_fit(2), Some(3));
        assert_eq!(m.best_fit(2), Some(12));
        assert_eq!(m.best_fit(3), Some(3));
        assert_eq!(m.best_fit(1), Some(9));
        assert_eq!(m.first_fit(6), None);
        assert_eq!(m.best_fit(6), None);
        assert_eq!(m.first_fit(0), None);
    }

    #[test]
    fn release_rule() {
        assert!(releasable(&[], 9, 0));
        assert!(releasable(&[5], 4, 0));
        assert!(
            !releasable(&[5], 5, 0),
            "a reader at the freeing tx holds the page"
        );
        assert!(
            !releasable(&[4, 10], 6, 0),
            "unknown allocation never qualifies for a gap"
        );
        assert!(releasable(&[4, 10], 6, 5));
        assert!(!releasable(&[4, 10], 6, 4));
        assert!(!releasable(&[4, 10], 11, 9));
    }

    #[test]
    fn free_release_rollback() {
        let mut m = model(&[10, 11]);
        m.allocate_at(5, 10, 2);
        m.free(7, 10, 2);
        assert_eq!(m.pending_ids(), vec![10, 11]);
        m.rollback(7);
        assert_eq!(m.pending_count(), 0);
        m.free(8, 10, 2);
        m.release_pending(&[4]);
        assert_eq!(m.free_ids(), vec![10, 11]);
    }
}
