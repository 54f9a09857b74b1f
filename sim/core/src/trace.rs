//! The event trace of a run: a running FNV-1a-64 hash over every event line, and the last
//! lines kept for failure reports. Two runs of one seed must end with the same hash.

use std::collections::VecDeque;
use std::fmt::{self, Write as _};

const TAIL_MAX: usize = 40;

#[derive(Clone, Debug)]
pub struct Trace {
    hash: u64,
    events: u64,
    tail: VecDeque<String>,
    /// Every line, when a report asked for them ([`Trace::keep_all`]).
    all: Option<Vec<String>>,
}

impl Default for Trace {
    fn default() -> Trace {
        Trace {
            hash: 0xcbf2_9ce4_8422_2325,
            events: 0,
            tail: VecDeque::new(),
            all: None,
        }
    }
}

impl Trace {
    pub fn record(&mut self, line: String) {
        if self.tail.len() == TAIL_MAX {
            self.tail.pop_front();
        }
        self.push(line);
    }

    /// [`Trace::record`] of a line formatted straight into the buffer of the line that leaves
    /// the tail: the line of every operation, without a new allocation for each.
    pub fn record_args(&mut self, args: fmt::Arguments<'_>) {
        let mut line = match self.tail.len() {
            TAIL_MAX => self.tail.pop_front().unwrap_or_default(),
            _ => String::new(),
        };
        line.clear();
        line.write_fmt(args)
            .expect("writing to a String cannot fail");
        self.push(line);
    }

    fn push(&mut self, line: String) {
        // The line's bytes, then its newline, in a plain loop over a local: chaining the
        // newline on as an iterator cost a branch per byte of every operation's line.
        let step = |h: u64, b: u8| (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3);
        let hash = line.bytes().fold(self.hash, step);
        self.hash = step(hash, b'\n');
        self.events += 1;
        if let Some(all) = &mut self.all {
            all.push(line.clone());
        }
        self.tail.push_back(line);
    }

    /// Keep every line from now on, not only the tail (off by default: a sweep keeps 40).
    pub fn keep_all(&mut self) {
        self.all.get_or_insert_with(Vec::new);
    }

    /// Every line kept since [`Trace::keep_all`].
    pub fn take_all(&mut self) -> Vec<String> {
        self.all.take().unwrap_or_default()
    }

    pub fn hash(&self) -> u64 {
        self.hash
    }

    pub fn events(&self) -> u64 {
        self.events
    }

    pub fn tail(&self) -> Vec<String> {
        self.tail.iter().cloned().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hash_depends_on_content_and_order() {
        let mut a = Trace::default();
        let mut b = Trace::default();
        a.record("x".into());
        a.record("y".into());
        b.record("y".into());
        b.record("x".into());
        assert_ne!(a.hash(), b.hash());
        let mut c = Trace::default();
        c.record("x".into());
        c.record("y".into());
        assert_eq!(a.hash(), c.hash());
        for i in 0..100 {
            a.record(i.to_string());
        }
        assert_eq!(a.tail().len(), TAIL_MAX);
        assert_eq!(a.events(), 102);
        // A formatted line is the same event as the same text recorded whole, tail and all.
        let (mut whole, mut args) = (Trace::default(), Trace::default());
        for i in 0..(TAIL_MAX + 5) {
            whole.record(format!("{i} put k{i} -> ok"));
            args.record_args(format_args!("{i} put k{i} -> ok"));
        }
        assert_eq!(whole.hash(), args.hash());
        assert_eq!(whole.tail(), args.tail());
        assert_eq!(whole.events(), args.events());
    }
}
