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
    pub message: String,
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
        for p in span.ids() {
            if self.is_full() {
                return;
            }
            self.add(Some(p), message);
        }
    }

    pub fn add(&mut self, page: Option<PageId>, message: impl Into<String>) {
        if self.problems.len() < PROBLEMS_MAX {
            self.problems.push(Problem {
                page,
                message: message.into(),
            });
        } else if self.problems.len() == PROBLEMS_MAX {
            self.problems.push(Problem {
                page: None,
                message: "too many problems; stopped".into(),
            });
        }
    }
}
