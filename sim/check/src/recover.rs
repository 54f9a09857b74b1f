//! Opening a crash image as the application would after the reboot, and judging what it finds.
//!
//! Recovery is `Db::open` (writable, the workload's options) on the image in memory, then a read
//! of the whole database and `check()`. Bytes from disk are untrusted: any typed error is
//! `Corrupt`, and a panic is caught and kept as `Panic` — always a violation, an engine bug.

use super::adapter;
use super::book::{Allowed, Book, ModelId};
use super::record::OpenReader;
use super::CheckConfig;
use crate::engines::redb::RedbDb;
use crate::engines::EngineKind;
use crate::runner::read_model;
use crashlab_engine::{Db, MemStorage, Options};
use crashlab_models::KvModel;

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

/// Recover `image` as the application would, on the check's engine.
pub(crate) fn recover(
    cfg: &CheckConfig,
    image: Vec<u8>,
    options: &Options,
    book: &Book,
) -> Recovery {
    match cfg.engine {
        EngineKind::Crashlab => recover_crashlab(image, options, book),
        EngineKind::Redb => adapter::recover::<RedbDb>(cfg, image, book),
    }
}

fn recover_crashlab(image: Vec<u8>, options: &Options, book: &Book) -> Recovery {
    guarded(book, || {
        let db = Db::open(MemStorage::from_bytes(image), options.clone())
            .map_err(|e| format!("open failed: {e}"))?;
        let model = read_model(&db).map_err(|e| format!("read failed: {e}"))?;
        let problems = db.check().map_err(|e| format!("check failed: {e}"))?;
        no_problems(&problems).map(|()| model)
    })
}

/// `Err` naming how many problems an engine's integrity check found, and the first.
pub(crate) fn no_problems(problems: &[impl std::fmt::Display]) -> Result<(), String> {
    match problems.first() {
        Some(p) => Err(format!("check: {} problems, first: {p}", problems.len())),
        None => Ok(()),
    }
}

/// What `reader` reads at a crash point whose page cache holds `current`: the image with the
/// reader's snapshot meta in both slots, opened read-only — the pages a reader that misses its
/// cache reads now.
pub(crate) fn reader_view(
    current: &[u8],
    reader: &OpenReader,
    options: &Options,
    book: &Book,
) -> Recovery {
    let meta = reader.meta.encode_page();
    let mut bytes = current.to_vec();
    if bytes.len() < 2 * meta.len() {
        return Recovery::Corrupt("the file is shorter than its two meta pages".into());
    }
    for slot in bytes[..2 * meta.len()].chunks_mut(meta.len()) {
        slot.copy_from_slice(&meta);
    }
    let options = Options {
        read_only: true,
        ..options.clone()
    };
    guarded(book, || {
        let db = Db::open(MemStorage::from_bytes(bytes), options)
            .map_err(|e| format!("open failed: {e}"))?;
        read_model(&db).map_err(|e| format!("read failed: {e}"))
    })
}

pub(crate) fn guarded(book: &Book, f: impl FnOnce() -> Result<KvModel, String>) -> Recovery {
    match crate::guard::catch(f) {
        Ok(Ok(model)) => Recovery::State(book.find(&model)),
        Ok(Err(e)) => Recovery::Corrupt(e),
        Err(panic) => Recovery::Panic(panic),
    }
}

/// Why a recovery breaks the promise in `allowed` (`process`: a process crash, the page cache
/// kept), or `None` when it keeps it.
pub(crate) fn judge(
    allowed: &Allowed,
    recovery: &Recovery,
    process: bool,
) -> Option<(&'static str, String)> {
    let states = if process {
        &allowed.process
    } else {
        &allowed.power
    };
    match recovery {
        Recovery::Panic(m) => Some(("panic", m.clone())),
        // With `no_sync`, a power cut may leave anything: only a panic is a bug.
        _ if !allowed.promised && !process => None,
        Recovery::State(Some(id)) if states.contains(id) => None,
        Recovery::State(Some(_)) => Some((
            "durability",
            format!(
                "recovered a committed state that is none of the {} allowed here \
                 (older than the last durable commit, or never attempted)",
                states.len()
            ),
        )),
        Recovery::State(None) => Some((
            "durability",
            "recovered a state no commit produced (a partial or mixed transaction)".into(),
        )),
        Recovery::Corrupt(m) => Some(("corrupt", m.clone())),
    }
}
