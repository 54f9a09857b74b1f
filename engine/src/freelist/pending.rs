//! Freed pages waiting for readers: one queue, in the order of the txids that freed them.
//!
//! Write transactions free pages under ascending txids, and release takes them back from the
//! oldest end (every page freed before the oldest reader) or from a txid range between two
//! readers. A map from txid to a list per transaction allocated a tree node and a list per
//! commit and freed both at the next one; a queue ordered by txid keeps its allocation, and
//! finds a txid's pages by binary search.
//!
//! Invariant: `pages` ascends (non-strictly) by `freed_by`; pages freed under one txid keep the
//! order they were freed in.

use crashlab_format::types::{PageId, TxId};
use std::collections::VecDeque;

/// A page waiting for readers to finish: the write tx that freed it and the one that allocated
/// it (0 = unknown).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct PendingPage {
    pub freed_by: TxId,
    pub id: PageId,
    pub alloc_tx: TxId,
}

#[derive(Clone, Debug, Default)]
pub(super) struct Pending {
    pages: VecDeque<PendingPage>,
}

impl Pending {
    /// Queue `page` after every page freed under its txid or an earlier one.
    pub fn push(&mut self, page: PendingPage) {
        match self.pages.back() {
            Some(last) if last.freed_by > page.freed_by => {
                let at = self.pages.partition_point(|p| p.freed_by <= page.freed_by);
                self.pages.insert(at, page);
            }
            _ => self.pages.push_back(page),
        }
    }

    /// Move to `out` every page freed before `oldest` (every page, for `None`).
    pub fn take_freed_before(&mut self, oldest: Option<TxId>, out: &mut Vec<PageId>) {
        let end = match oldest {
            Some(oldest) => self.pages.partition_point(|p| p.freed_by < oldest),
            None => self.pages.len(),
        };
        // Copied through the range's iterator, which knows its length (a drain's mapped
        // iterator grew `out` one id at a time), then dropped.
        out.extend(self.pages.range(..end).map(|p| p.id));
        self.pages.drain(..end);
    }

    /// Move to `out` the pages freed and allocated by txids in `first..=last`.
    pub fn take_lived_within(&mut self, first: TxId, last: TxId, out: &mut Vec<PageId>) {
        let (lo, hi) = self.freed_within(first, last);
        let mut kept = lo;
        for i in lo..hi {
            let p = self.pages[i];
            let lived_within = p.alloc_tx != TxId(0) && first <= p.alloc_tx && p.alloc_tx <= last;
            if lived_within {
                out.push(p.id);
            } else {
                self.pages[kept] = p;
                kept += 1;
            }
        }
        self.pages.drain(kept..hi);
    }

    /// Remove and return the pages freed under `txid`, in the order they were freed.
    pub fn take_freed_by(&mut self, txid: TxId) -> Vec<PendingPage> {
        let (lo, hi) = self.freed_within(txid, txid);
        self.pages.drain(lo..hi).collect()
    }

    /// The pages freed under `txid`.
    pub fn freed_by(&self, txid: TxId) -> impl Iterator<Item = &PendingPage> {
        let (lo, hi) = self.freed_within(txid, txid);
        self.pages.range(lo..hi)
    }

    /// Every pending page, by the txid that freed it.
    pub fn iter(&self) -> impl Iterator<Item = &PendingPage> {
        self.pages.iter()
    }

    /// The index range of the pages freed under txids in `first..=last`.
    fn freed_within(&self, first: TxId, last: TxId) -> (usize, usize) {
        let lo = self.pages.partition_point(|p| p.freed_by < first);
        let hi = self.pages.partition_point(|p| p.freed_by <= last).max(lo);
        (lo, hi)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeMap;

    /// The map of per-txid lists this queue replaced, as the reference.
    type Model = BTreeMap<TxId, Vec<PendingPage>>;

    #[derive(Clone, Debug)]
    enum Op {
        Push { freed_by: u64, alloc_tx: u64 },
        FreedBefore(Option<u64>),
        LivedWithin(u64, u64),
        FreedBy(u64),
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            6 => (0u64..12, 0u64..12).prop_map(|(freed_by, alloc_tx)| Op::Push { freed_by, alloc_tx }),
            1 => proptest::option::of(0u64..12).prop_map(Op::FreedBefore),
            1 => (0u64..12, 0u64..12).prop_map(|(a, b)| Op::LivedWithin(a.min(b), a.max(b))),
            1 => (0u64..12).prop_map(Op::FreedBy),
        ]
    }

    fn flat(model: &Model) -> Vec<PendingPage> {
        model.values().flatten().copied().collect()
    }

    proptest! {
        /// Every page taken, and what is left in order, is what the per-txid lists gave.
        #[test]
        fn takes_what_the_per_txid_lists_took(ops in proptest::collection::vec(op(), 0..200)) {
            let mut queue = Pending::default();
            let mut model = Model::new();
            for (n, op) in ops.into_iter().enumerate() {
                match op {
                    Op::Push { freed_by, alloc_tx } => {
                        let page = PendingPage {
                            freed_by: TxId(freed_by),
                            id: PageId(n as u64),
                            alloc_tx: TxId(alloc_tx),
                        };
                        queue.push(page);
                        model.entry(page.freed_by).or_default().push(page);
                    }
                    Op::FreedBefore(oldest) => {
                        let mut got = Vec::new();
                        queue.take_freed_before(oldest.map(TxId), &mut got);
                        let kept = match oldest {
                            Some(o) => model.split_off(&TxId(o)),
                            None => Model::new(),
                        };
                        let taken = std::mem::replace(&mut model, kept);
                        let want: Vec<PageId> = flat(&taken).iter().map(|p| p.id).collect();
                        prop_assert_eq!(got, want);
                    }
                    Op::LivedWithin(first, last) => {
                        let (first, last) = (TxId(first), TxId(last));
                        let mut got = Vec::new();
                        queue.take_lived_within(first, last, &mut got);
                        let mut want = Vec::new();
                        for (_, list) in model.range_mut(first..=last) {
                            list.retain(|p| {
                                let lived = p.alloc_tx != TxId(0)
                                    && first <= p.alloc_tx
                                    && p.alloc_tx <= last;
                                if lived {
                                    want.push(p.id);
                                }
                                !lived
                            });
                        }
                        model.retain(|_, list| !list.is_empty());
                        prop_assert_eq!(got, want);
                    }
                    Op::FreedBy(txid) => {
                        let seen: Vec<PendingPage> = queue.freed_by(TxId(txid)).copied().collect();
                        let got = queue.take_freed_by(TxId(txid));
                        let want = model.remove(&TxId(txid)).unwrap_or_default();
                        prop_assert_eq!(&seen, &want);
                        prop_assert_eq!(got, want);
                    }
                }
                let left: Vec<PendingPage> = queue.iter().copied().collect();
                prop_assert_eq!(left, flat(&model));
            }
        }
    }
}
