//! Opening a crash image as the application would after the reboot, and judging what it finds.
//!
//! Recovery is the simulator's [`recover_image`]: the engine opened on the image in memory
//! (writable, the workload's options), the whole database read and the engine's integrity check
//! run. Bytes from disk are untrusted: any typed error is `Corrupt`, and a panic is caught and
//! kept as `Panic` — always a violation, an engine bug.

use crate::book::{Allowed, Book, ModelId};
use crate::record::OpenReader;
use crashlab_sim::adapter::Engine;
use crashlab_sim::driver::{recover_image, Recovered};
use crashlab_sim::guard;
use crashlab_sim::verdict::{During, Verdict};

/// What opening an image gave.
#[derive(Clone, Debug)]
pub(crate) enum Recovery {
    /// It opened, read and checked clean; the state, if the book knows it.
    State(Option<ModelId>),
    /// A typed error, or `check()` found problems.
    Corrupt(String),
    /// The engine panicked.
    Panic(String),
}

/// Recover `image` as the application would, on engine `E`.
pub(crate) fn recover<E: Engine>(image: Vec<u8>, cfg: &E::Config, book: &Book) -> Recovery {
    match recover_image::<E>(image, cfg) {
        Recovered::State(model) => Recovery::State(book.find(&model)),
        Recovered::Corrupt(m) => Recovery::Corrupt(m),
        Recovered::Panic(m) => Recovery::Panic(m),
    }
}

/// What `reader` reads at a crash point whose page cache holds `current`.
pub(crate) fn reader_view<E: Engine>(
    current: &[u8],
    reader: &OpenReader,
    cfg: &E::Config,
    book: &Book,
) -> Option<Recovery> {
    let token = reader.token.as_deref()?;
    let read = guard::catch(|| E::read_view(current.to_vec(), token, cfg));
    Some(match read {
        Ok(Ok(model)) => Recovery::State(book.find(&model)),
        Ok(Err(e)) => Recovery::Corrupt(format!("read failed: {e}")),
        Err(panic) => Recovery::Panic(panic),
    })
}

/// Why a recovery breaks the promise in `allowed` (`process`: a process crash, the page cache
/// kept), or `None` when it keeps it.
pub(crate) fn judge(
    allowed: &Allowed,
    recovery: &Recovery,
    process: bool,
) -> Option<(Verdict, String)> {
    let states = if process {
        &allowed.process
    } else {
        &allowed.power
    };
    match recovery {
        Recovery::Panic(m) => Some((Verdict::Panic, m.clone())),
        // With `no_sync`, a power cut may leave anything: only a panic is a bug.
        _ if !allowed.promised && !process => None,
        Recovery::State(Some(id)) if states.contains(id) => None,
        Recovery::State(Some(_)) => Some((
            Verdict::Durability,
            format!(
                "recovered a committed state that is none of the {} allowed here \
                 (older than the last durable commit, or never attempted)",
                states.len()
            ),
        )),
        Recovery::State(None) => Some((
            Verdict::Durability,
            "recovered a state no commit produced (a partial or mixed transaction)".into(),
        )),
        Recovery::Corrupt(m) => Some((Verdict::Failed(During::Recovery), m.clone())),
    }
}
