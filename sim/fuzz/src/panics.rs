//! Panic messages with their location, for the failure report. The worker installs a hook that
//! records the message and location of a panic instead of printing it (the pipeline catches the
//! unwind and reports it as a failure, so stderr stays for what kills the process).

use std::any::Any;
use std::sync::Mutex;

static LAST: Mutex<Option<String>> = Mutex::new(None);

/// Record panics instead of printing them.
pub fn install_hook() {
    std::panic::set_hook(Box::new(|info| {
        let what = payload_text(info.payload());
        let at = info
            .location()
            .map(|l| format!("{}:{}", l.file(), l.line()))
            .unwrap_or_default();
        *LAST.lock().unwrap_or_else(|e| e.into_inner()) = Some(format!("{at}: {what}"));
    }));
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
