//! Iteration over a bucket's keys, or a range of them, in order from either end: an
//! `Iterator` (and `DoubleEndedIterator`) of [`Entry`]s, each borrowing its leaf (no per-item
//! allocation). Built on two cursors, one per end; the ends stop where they meet.
//!
//! A step that fails (an unreadable page, keys out of order) yields its error once, and the
//! iteration ends there.

use crate::cursor::Cursor;
use crate::entry::Entry;
use crate::error::Result;
use std::ops::{Bound, RangeBounds};

/// The keys of a bucket in `[lo, hi]`-style bounds, in order; see [`crate::Bucket::range`].
pub struct Iter<'a> {
    front: Cursor<'a>,
    back: Cursor<'a>,
    lo: Bound<Vec<u8>>,
    hi: Bound<Vec<u8>>,
    front_started: bool,
    back_started: bool,
    done: bool,
}

fn owned(b: Bound<&&[u8]>) -> Bound<Vec<u8>> {
    match b {
        Bound::Included(k) => Bound::Included(k.to_vec()),
        Bound::Excluded(k) => Bound::Excluded(k.to_vec()),
        Bound::Unbounded => Bound::Unbounded,
    }
}

impl<'a> Iter<'a> {
    /// The entries of `cursor`'s bucket within `range`. `cursor` and `back` are two cursors on
    /// the same bucket.
    pub(crate) fn new<'k>(
        front: Cursor<'a>,
        back: Cursor<'a>,
        range: impl RangeBounds<&'k [u8]>,
    ) -> Iter<'a> {
        Iter {
            front,
            back,
            lo: owned(range.start_bound()),
            hi: owned(range.end_bound()),
            front_started: false,
            back_started: false,
            done: false,
        }
    }

    fn below_hi(&self, key: &[u8]) -> bool {
        match &self.hi {
            Bound::Included(h) => key <= h.as_slice(),
            Bound::Excluded(h) => key < h.as_slice(),
            Bound::Unbounded => true,
        }
    }

    fn above_lo(&self, key: &[u8]) -> bool {
        match &self.lo {
            Bound::Included(l) => key >= l.as_slice(),
            Bound::Excluded(l) => key > l.as_slice(),
            Bound::Unbounded => true,
        }
    }

    /// The first entry at or after the lower bound.
    fn start_front(&mut self) -> Result<Option<Entry<'a>>> {
        let first = match &self.lo {
            Bound::Unbounded => self.front.first()?,
            Bound::Included(k) | Bound::Excluded(k) => self.front.seek(k)?,
        };
        match first {
            Some(e) if !self.above_lo(e.key()) => self.front.next(),
            other => Ok(other),
        }
    }

    /// The last entry at or before the upper bound.
    fn start_back(&mut self) -> Result<Option<Entry<'a>>> {
        let at = match &self.hi {
            Bound::Unbounded => return self.back.last(),
            Bound::Included(k) | Bound::Excluded(k) => self.back.seek(k)?,
        };
        match at {
            // Past every key: the last one is the candidate.
            None => self.back.last(),
            Some(e) if !self.below_hi(e.key()) => self.back.prev(),
            found => Ok(found),
        }
    }

    fn step_front(&mut self) -> Result<Option<Entry<'a>>> {
        let next = if self.front_started {
            self.front.next()?
        } else {
            self.front_started = true;
            self.start_front()?
        };
        let Some(e) = next else { return Ok(None) };
        // The back end, once started, sits on the last entry it handed out.
        let crossed = self.back_started && self.back.key().is_some_and(|b| e.key() >= b);
        if crossed || !self.below_hi(e.key()) {
            return Ok(None);
        }
        Ok(Some(e))
    }

    fn step_back(&mut self) -> Result<Option<Entry<'a>>> {
        let next = if self.back_started {
            self.back.prev()?
        } else {
            self.back_started = true;
            self.start_back()?
        };
        let Some(e) = next else { return Ok(None) };
        let crossed = self.front_started && self.front.key().is_some_and(|f| e.key() <= f);
        if crossed || !self.above_lo(e.key()) {
            return Ok(None);
        }
        Ok(Some(e))
    }

    fn finish(&mut self, step: Result<Option<Entry<'a>>>) -> Option<Result<Entry<'a>>> {
        match step {
            Ok(Some(e)) => Some(Ok(e)),
            Ok(None) => {
                self.done = true;
                None
            }
            Err(e) => {
                self.done = true;
                Some(Err(e))
            }
        }
    }
}

impl<'a> Iterator for Iter<'a> {
    type Item = Result<Entry<'a>>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let step = self.step_front();
        self.finish(step)
    }
}

impl DoubleEndedIterator for Iter<'_> {
    fn next_back(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let step = self.step_back();
        self.finish(step)
    }
}
