//! An engine that runs in another process and times blocks of operations on request: bbolt,
//! through `bbolt-bench -serve ENGINE/SHAPE/MODE` (`tools/bbolt/bench`), so that
//! `benches/interleaved.rs` can take turns between crashlab and bbolt as it does between
//! crashlab and LMDB.
//!
//! The protocol is one line each way: the count of operations to run, then the nanoseconds
//! they took, timed by the server around the operations alone (so the pipe's round trip counts
//! on neither side). Closing the server's stdin ends it.

use std::io::{self, BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

/// A running server for one engine, shape and mode.
pub struct Served {
    what: String,
    child: Child,
    /// `None` once closed, so that `Drop` can end the server before waiting for it.
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
}

impl Served {
    /// Start `program` with `args` (its stderr stays the caller's); `what` names it in errors.
    pub fn spawn(program: &Path, args: &[&str], what: &str) -> io::Result<Served> {
        let mut child = Command::new(program)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .map_err(|e| io::Error::new(e.kind(), format!("{what}: cannot start: {e}")))?;
        let stdin = child.stdin.take();
        let stdout = BufReader::new(child.stdout.take().expect("stdout is piped"));
        Ok(Served {
            what: what.to_string(),
            child,
            stdin,
            stdout,
        })
    }

    /// Run the next `ops` operations; the nanoseconds the server timed them at. An error when
    /// the server has exited or answers anything but a whole number.
    pub fn block(&mut self, ops: u64) -> io::Result<u64> {
        let stdin = self
            .stdin
            .as_mut()
            .expect("a served engine is open until dropped");
        writeln!(stdin, "{ops}")
            .and_then(|()| stdin.flush())
            .map_err(|e| self.error(format!("cannot send a block: {e}")))?;
        let mut line = String::new();
        if self.stdout.read_line(&mut line)? == 0 {
            return Err(self.error("exited instead of answering".into()));
        }
        line.trim()
            .parse()
            .map_err(|_| self.error(format!("answered {line:?}, expected nanoseconds")))
    }

    fn error(&self, what: String) -> io::Error {
        io::Error::other(format!("{}: {what}", self.what))
    }
}

impl Drop for Served {
    /// Close stdin, which ends the server, and reap it.
    fn drop(&mut self) {
        drop(self.stdin.take());
        let _ = self.child.wait();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh(script: &str) -> Served {
        Served::spawn(Path::new("/bin/sh"), &["-c", script], "test server").expect("spawn sh")
    }

    #[test]
    fn a_block_sends_its_count_and_reads_the_time() {
        // Answers ten nanoseconds per operation asked for.
        let mut s = sh("while read n; do echo $((n * 10)); done");
        assert_eq!(s.block(7).unwrap(), 70);
        assert_eq!(s.block(1000).unwrap(), 10_000);
    }

    #[test]
    fn a_server_that_exits_or_answers_garbage_is_an_error_not_a_hang() {
        let mut gone = sh("read n; exit 1");
        let err = gone.block(5).unwrap_err().to_string();
        assert!(
            err.contains("test server: exited instead of answering"),
            "{err}"
        );
        let mut garbage = sh("read n; echo soon");
        let err = garbage.block(5).unwrap_err().to_string();
        assert!(err.contains("answered \"soon\\n\""), "{err}");
    }

    #[test]
    fn a_missing_program_is_an_error_naming_it() {
        let err = Served::spawn(Path::new("/nonexistent/bbolt-bench"), &[], "bbolt-x")
            .err()
            .expect("no such program")
            .to_string();
        assert!(err.starts_with("bbolt-x: cannot start"), "{err}");
    }
}
