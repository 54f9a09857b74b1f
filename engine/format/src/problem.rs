//! Problems found in a file: what `check` (the engine's) and the inspection views report.
//!
//! A [`Report`] collects at most [`PROBLEMS_MAX`] of them, so a damaged file that claims
//! billions of pages costs a bounded report.

use crate::error::{Error, Result};
use crate::types::{PageId, PageSpan};
use std::fmt;
use std::io;

/// One inconsistency found in a file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Problem {
    pub page: Option<PageId>,
    pub kind: ProblemKind,
    pub message: String,
}

/// What a [`Problem`] is, for the few kinds a caller acts on; the message says the rest.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ProblemKind {
    /// Two references lead to the page (two parents, two buckets, or a cycle). A commit that
    /// rewrites one path frees the page while the other still points at it (FORMAT.md §10).
    ReachedTwice,
    /// The page is reachable and also free or pending: a commit may allocate and overwrite it
    /// (FORMAT.md §10).
    ReachableFree,
    /// A reference to a page at or past the high-water mark, or a node whose run reaches past
    /// it: pages the next commits allocate, so what `target` (the page referenced, or the
    /// node) reads changes when they do (FORMAT.md §10).
    BeyondHighWater { target: PageId },
    /// The meta's txid is the last one: nothing is wrong with the pages, but no commit can follow.
    TxIdExhausted,
    /// Anything else.
    Other,
}

impl Problem {
    /// The problem `check` reports for a meta whose txid leaves no room for another commit.
    pub fn txid_exhausted(meta: &crate::meta::Meta) -> Problem {
        Problem {
            page: Some(meta.slot()),
            kind: ProblemKind::TxIdExhausted,
            message: format!("txid {} leaves no room for another commit", meta.txid),
        }
    }
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.page {
            Some(p) => write!(f, "page {p}: {}", self.message),
            None => write!(f, "{}", self.message),
        }
    }
}

/// What `e` says went wrong at `page`, without repeating the page number a [`Problem`] shows.
pub fn reason_at(page: PageId, e: &Error) -> String {
    match e {
        Error::Corrupted { page: p, reason } if *p == page => reason.to_string(),
        _ => e.to_string(),
    }
}

/// The page a corruption error names.
pub fn e_page(e: &Error) -> Option<PageId> {
    e.page()
}

/// Enough problems to diagnose any file; past this the report says it stopped.
pub const PROBLEMS_MAX: usize = 10_000;

/// The message of the last problem of a report cut short at [`PROBLEMS_MAX`].
pub const STOPPED: &str = "too many problems; stopped";

/// Problems found so far, at most [`PROBLEMS_MAX`] of them.
#[derive(Default)]
pub struct Report {
    problems: Vec<Problem>,
    /// The first page the storage could not read: the check is then incomplete, which is an
    /// I/O error, not a problem of the file's contents.
    unreadable: Option<Error>,
}

impl Report {
    pub fn into_problems(self) -> Vec<Problem> {
        self.problems
    }

    /// The problems, or the first I/O error met if a page could not be read (every readable
    /// page was still checked: an unread page is no evidence of damage).
    pub fn into_result(self) -> Result<Vec<Problem>> {
        match self.unreadable {
            Some(e) => Err(e),
            None => Ok(self.problems),
        }
    }

    /// The storage failed to read a page during `op`: the report is incomplete (the first
    /// such failure is kept).
    pub fn unreadable(&mut self, op: &'static str, source: io::Error) {
        self.unreadable.get_or_insert(Error::Io { op, source });
    }

    /// Whether the report has stopped taking problems.
    pub fn is_full(&self) -> bool {
        self.problems.len() > PROBLEMS_MAX
    }

    /// The same problem for every page of `span`, until the report is full: a run as long as a
    /// high-water mark claims costs at most [`PROBLEMS_MAX`] steps.
    pub fn add_each(&mut self, span: PageSpan, message: &str) {
        self.add_each_of(ProblemKind::Other, span, message);
    }

    pub fn add(&mut self, page: Option<PageId>, message: impl Into<String>) {
        self.push(Problem {
            page,
            kind: ProblemKind::Other,
            message: message.into(),
        });
    }

    /// [`Report::add_each`] for a problem of `kind`.
    pub fn add_each_of(&mut self, kind: ProblemKind, span: PageSpan, message: &str) {
        for p in span.ids() {
            if self.is_full() {
                return;
            }
            self.push(Problem {
                page: Some(p),
                kind,
                message: message.into(),
            });
        }
    }

    pub fn push(&mut self, problem: Problem) {
        if self.problems.len() < PROBLEMS_MAX {
            self.problems.push(problem);
        } else if self.problems.len() == PROBLEMS_MAX {
            self.problems.push(Problem {
                page: None,
                kind: ProblemKind::Other,
                message: STOPPED.into(),
            });
        }
    }
}
