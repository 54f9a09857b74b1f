//! Panic messages with their location, for the failure report. While the pipeline runs an input,
//! the hook records a panic's message and location instead of printing it (the pipeline catches
//! the unwind and reports it as the input's failure, so stderr stays for what kills the
//! process); any other panic is printed as usual.

use std::any::Any;
use std::panic::PanicHookInfo;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, Once};

static LAST: Mutex<Option<String>> = Mutex::new(None);
static CAPTURING: AtomicBool = AtomicBool::new(false);

/// Install the hook (once per process).
pub fn install_hook() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let print = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info: &PanicHookInfo<'_>| {
            if !CAPTURING.load(Ordering::SeqCst) {
                return print(info);
            }
            let what = payload_text(info.payload());
            let at = info
                .location()
                .map(|l| format!("{}:{}", l.file(), l.line()))
                .unwrap_or_default();
            *LAST.lock().unwrap_or_else(|e| e.into_inner()) = Some(format!("{at}: {what}"));
        }));
    });
}

/// Run `f`, recording instead of printing any panic it raises (see [`message`]).
pub fn capturing<T>(f: impl FnOnce() -> T) -> T {
    CAPTURING.store(true, Ordering::SeqCst);
    let out = f();
    CAPTURING.store(false, Ordering::SeqCst);
    out
}

fn payload_text(payload: &(dyn Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "a panic with a non-string payload".to_owned()
    }
}

/// The message of the panic just caught: the hook's record (with the location) if it is
/// installed, else the payload's text.
pub fn message(payload: &(dyn Any + Send)) -> String {
    LAST.lock()
        .unwrap_or_else(|e| e.into_inner())
        .take()
        .unwrap_or_else(|| payload_text(payload))
}
