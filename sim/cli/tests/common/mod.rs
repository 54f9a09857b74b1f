//! Running the `crashlab` binary from a test: with a deadline, and its output as text.
#![allow(dead_code, reason = "each test binary uses some of these")]

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

pub fn crashlab(args: &[&str], dir: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_crashlab"))
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap()
}

/// Like [`crashlab`], but the run must end within `secs`: a hang (the regression these tests
/// guard against) kills the process and fails the test instead of blocking it.
pub fn crashlab_within(secs: u64, args: &[&str], dir: &Path) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_crashlab"))
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The deadline is the test's own watchdog; it never feeds what is tested.
    let deadline = Instant::now() + Duration::from_secs(secs);
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            child.kill().unwrap();
            let o = child.wait_with_output().unwrap();
            panic!(
                "crashlab {args:?} still running after {secs} s: {}",
                text(&o)
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

/// Exit 2 within 30 s, with every `needle` in the output: bad input answered, not run.
pub fn refused(args: &[&str], dir: &Path, needles: &[&str]) {
    let o = crashlab_within(30, args, dir);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(2), "{args:?}: {t}");
    for needle in needles {
        assert!(t.contains(needle), "{args:?}: missing `{needle}` in:\n{t}");
    }
}

pub fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}
