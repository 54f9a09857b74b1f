//! The engines under comparison and the setting each one uses for every [`Mode`].
//!
//! | engine | durable (`sync`) | `no_sync` | other |
//! |---|---|---|---|
//! | crashlab (4 freelist configurations) | fdatasync at commit (twice: pages, then meta) | `Options::no_sync` | — |
//! | redb | `Durability::Immediate` (its default) | `Durability::None` | — |
//! | LMDB (heed, bundled) | default flags: fdatasync at commit | `EnvFlags::NO_SYNC` | — |
//! | SQLite (rusqlite, bundled) | WAL, `synchronous=FULL` | WAL, `synchronous=OFF` | WAL, `synchronous=NORMAL` |

mod crashlab;
mod lmdb;
mod redb;
mod sqlite;

use crate::concurrent::Concurrent;
use crate::kv::{Kv, Mode};
use crashlab_engine::{FreelistKind, Options};
use std::path::Path;
use std::time::Duration;

/// Which engine, and for crashlab which freelist configuration.
#[derive(Clone, Copy, Debug)]
pub enum Which {
    /// crashlab's engine with this freelist kind; `true` = freelist not synced
    /// (`no_freelist_sync`, rebuilt on open).
    Crashlab(FreelistKind, bool),
    Redb,
    Lmdb,
    Sqlite,
}

/// One engine configuration and the modes it is measured in.
#[derive(Clone, Copy, Debug)]
pub struct Engine {
    /// The name in benchmark ids and the joined table.
    pub name: &'static str,
    pub which: Which,
    /// Write modes, durable first.
    pub modes: &'static [Mode],
}

const SYNC_AND_NO_SYNC: &[Mode] = &[Mode::Sync, Mode::NoSync];

const fn crashlab(name: &'static str, freelist: FreelistKind, no_freelist_sync: bool) -> Engine {
    Engine {
        name,
        which: Which::Crashlab(freelist, no_freelist_sync),
        modes: SYNC_AND_NO_SYNC,
    }
}

/// Every configuration, crashlab's first (bbolt's default freelist configuration first).
pub const ENGINES: [Engine; 7] = [
    crashlab("crashlab-array-synced", FreelistKind::Array, false),
    crashlab("crashlab-array-nosync", FreelistKind::Array, true),
    crashlab("crashlab-hashmap-synced", FreelistKind::Hashmap, false),
    crashlab("crashlab-hashmap-nosync", FreelistKind::Hashmap, true),
    Engine {
        name: "redb",
        which: Which::Redb,
        modes: SYNC_AND_NO_SYNC,
    },
    Engine {
        name: "lmdb",
        which: Which::Lmdb,
        modes: SYNC_AND_NO_SYNC,
    },
    Engine {
        name: "sqlite",
        which: Which::Sqlite,
        modes: &[Mode::Sync, Mode::Normal, Mode::NoSync],
    },
];

impl Engine {
    /// Open the database kept in directory `dir` (creating it, with an empty bucket, if it is
    /// not there yet) in `mode`. Each engine keeps its files in `dir` and nothing else does.
    pub fn open(&self, dir: &Path, mode: Mode) -> Box<dyn Kv> {
        assert!(
            self.modes.contains(&mode),
            "{} has no mode {mode:?}",
            self.name
        );
        match self.which {
            Which::Crashlab(freelist, no_freelist_sync) => Box::new(crashlab::Crashlab::open(
                dir,
                freelist,
                no_freelist_sync,
                mode,
            )),
            Which::Redb => Box::new(redb::Redb::open(dir, mode)),
            Which::Lmdb => Box::new(lmdb::Lmdb::open(dir, mode)),
            Which::Sqlite => Box::new(sqlite::Sqlite::open(dir, mode)),
        }
    }

    /// Open the database in `dir` (as [`Engine::open`] does) in durable mode, for writers on
    /// many threads at once: see [`Concurrent`] for how each engine takes them. With
    /// `no_batch_delay`, crashlab's group commit waits for no one (`max_batch_delay` 0); the
    /// peers' writers never wait, so for them that variant is `None`.
    pub fn open_concurrent(&self, dir: &Path, no_batch_delay: bool) -> Option<Box<dyn Concurrent>> {
        let mode = Mode::Sync;
        Some(match self.which {
            Which::Crashlab(freelist, no_freelist_sync) => {
                let delay = match no_batch_delay {
                    true => Duration::ZERO,
                    false => Options::default().max_batch_delay,
                };
                Box::new(crashlab::Crashlab::open_with_batch_delay(
                    dir,
                    freelist,
                    no_freelist_sync,
                    delay,
                ))
            }
            _ if no_batch_delay => return None,
            Which::Redb => Box::new(redb::Redb::open(dir, mode)),
            Which::Lmdb => Box::new(lmdb::Lmdb::open(dir, mode)),
            Which::Sqlite => Box::new(sqlite::SharedSqlite(std::sync::Mutex::new(
                sqlite::Sqlite::open(dir, mode),
            ))),
        })
    }

    /// Whether reads are worth measuring for this configuration: crashlab's four share one read
    /// path (the freelist only matters to writers), so only the first is measured.
    pub fn measures_reads(&self) -> bool {
        !matches!(self.which, Which::Crashlab(_, _)) || self.name == ENGINES[0].name
    }
}
