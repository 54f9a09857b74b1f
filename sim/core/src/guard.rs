//! Running engine code that may panic. A panic on a crash image or in a seeded run is a finding,
//! reported as a violation; what makes it actionable is where the engine panicked, which the
//! panic's payload does not carry. [`catch`] returns the message with its location, and prints
//! nothing for a panic it catches (the caller reports it); a panic anywhere else — a failing
//! test, a bug in crashlab — reaches the previous hook as before.

use std::any::Any;
use std::cell::{Cell, RefCell};
use std::future::Future;
use std::panic::{self, AssertUnwindSafe};
use std::pin::Pin;
use std::sync::Once;
use std::task::{Context, Poll};

thread_local! {
    /// How many [`catch`] calls this thread is inside.
    static CATCHING: Cell<u32> = const { Cell::new(0) };
    /// Where the last caught panic on this thread happened.
    static LOCATION: RefCell<Option<String>> = const { RefCell::new(None) };
}

static HOOK: Once = Once::new();

fn install_hook() {
    HOOK.call_once(|| {
        let previous = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            if CATCHING.with(Cell::get) == 0 {
                return previous(info);
            }
            let at = info
                .location()
                .map(|l| format!("{}:{}:{}", portable(l.file()), l.line(), l.column()));
            LOCATION.with(|s| *s.borrow_mut() = at);
        }));
    });
}

/// A source path without the machine's cargo home: `redb-4.6.0/src/...` rather than
/// `/home/me/.cargo/registry/src/index.crates.io-.../redb-4.6.0/src/...`, so a message (which
/// may go into a trace) is the same on every machine.
fn portable(file: &str) -> &str {
    match file.find("/registry/src/") {
        Some(i) => {
            let rest = &file[i + "/registry/src/".len()..];
            rest.split_once('/').map_or(rest, |(_index, path)| path)
        }
        None => file,
    }
}

/// Run `f`; a panic in it becomes `Err("message (at file:line:column)")`.
pub fn catch<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    install_hook();
    CATCHING.with(|c| c.set(c.get() + 1));
    let got = panic::catch_unwind(AssertUnwindSafe(f));
    CATCHING.with(|c| c.set(c.get() - 1));
    got.map_err(located)
}

/// The message of a caught panic with the location the hook recorded for it.
fn located(payload: Box<dyn Any + Send>) -> String {
    let message = panic_message(payload.as_ref());
    match LOCATION.with(|s| s.borrow_mut().take()) {
        Some(at) => format!("{message} (at {at})"),
        None => message,
    }
}

/// [`catch`] for a future: a panic while it is polled ends it with `Err`. What the future
/// borrowed is the caller's again afterwards, so a run that panics can still report its trace.
pub fn catch_future<F: Future>(f: F) -> impl Future<Output = Result<F::Output, String>> {
    install_hook();
    CatchUnwind(Box::pin(f))
}

struct CatchUnwind<F>(Pin<Box<F>>);

impl<F: Future> Future for CatchUnwind<F> {
    type Output = Result<F::Output, String>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let fut = self.0.as_mut();
        match catch(|| fut.poll(cx)) {
            Ok(Poll::Pending) => Poll::Pending,
            Ok(Poll::Ready(v)) => Poll::Ready(Ok(v)),
            Err(panic) => Poll::Ready(Err(panic)),
        }
    }
}

/// The message a panic carried.
pub fn panic_message(payload: &(dyn Any + Send)) -> String {
    payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_else(|| "non-string panic payload".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_caught_panic_names_its_message_and_location() {
        let line = line!() + 1;
        let e = catch(|| -> u32 { panic!("boom {}", 7) }).unwrap_err();
        assert!(e.starts_with("boom 7 (at "), "{e}");
        assert!(e.contains(&format!("sim/core/src/guard.rs:{line}:")), "{e}");
        assert_eq!(catch(|| 5), Ok(5));
    }

    #[test]
    fn nested_catches_each_report_their_own_panic() {
        let outer = catch(|| {
            let inner = catch(|| panic!("inner")).unwrap_err();
            assert!(inner.starts_with("inner (at "), "{inner}");
            panic!("outer")
        })
        .unwrap_err();
        assert!(outer.starts_with("outer (at "), "{outer}");
    }

    #[test]
    fn a_future_that_panics_ends_with_its_message_and_leaves_its_borrows() {
        let mut polled = 0u32;
        let rt = madsim::runtime::Runtime::with_seed_and_config(1, madsim::Config::default());
        let got = rt.block_on(catch_future(async {
            polled += 1;
            madsim::time::sleep(std::time::Duration::from_millis(1)).await;
            polled += 1;
            panic!("after {polled} steps")
        }));
        assert!(got.unwrap_err().starts_with("after 2 steps (at "));
        assert_eq!(polled, 2, "the counter is the caller's again");
    }

    #[test]
    fn registry_paths_lose_the_machines_cargo_home() {
        let p = "/root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/redb-4.6.0/src/a.rs";
        assert_eq!(portable(p), "redb-4.6.0/src/a.rs");
        assert_eq!(portable("engine/src/db.rs"), "engine/src/db.rs");
    }
}
