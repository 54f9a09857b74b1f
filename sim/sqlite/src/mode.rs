//! SQLite's modes a seed draws, what each promises, and their text in case files.
//!
//! A seed draws one of [`SqliteChoices::DRAWN`]: a journal mode (DELETE, TRUNCATE, PERSIST,
//! WAL) with synchronous FULL or EXTRA, or WAL with NORMAL — the modes SQLite documents as
//! safe from corruption at a power loss. A rollback journal with NORMAL is never drawn but may
//! be named in a case file: SQLite warns of "a very small (though non-zero) chance that a power
//! failure at just the wrong time could corrupt the database" there, and the sweep finds it
//! (docs/sqlite.md, the known-truth table). Two more values are never drawn either:
//! `synchronous=off` and `journal_mode=off`, the positive controls, for which the adapter
//! claims what an application assuming durable commits would (see [`promise`]).

use crashlab_sim::adapter::{Ack, Capabilities, Checksummed, EngineConfig};
use crashlab_sim::disk::LengthModel;
use crashlab_sim::profile::Profile;
use crashlab_sim::rng::SimRng;
use crashlab_sim::words::settings;
use std::fmt;

/// SQLite's page size (its default): the checker enumerates per page.
pub const SQLITE_PAGE_SIZE: u32 = 4096;

/// `PRAGMA journal_mode`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Journal {
    Delete,
    Truncate,
    Persist,
    Wal,
    /// Positive control: no rollback journal at all.
    Off,
}

/// `PRAGMA synchronous`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Synchronous {
    /// Positive control: SQLite never syncs.
    Off,
    Normal,
    Full,
    Extra,
}

impl Journal {
    pub const ON: [Journal; 4] = [
        Journal::Delete,
        Journal::Truncate,
        Journal::Persist,
        Journal::Wal,
    ];
    const ALL: [Journal; 5] = [
        Journal::Delete,
        Journal::Truncate,
        Journal::Persist,
        Journal::Wal,
        Journal::Off,
    ];

    /// The pragma's value.
    pub fn word(self) -> &'static str {
        match self {
            Journal::Delete => "delete",
            Journal::Truncate => "truncate",
            Journal::Persist => "persist",
            Journal::Wal => "wal",
            Journal::Off => "off",
        }
    }
}

impl Synchronous {
    pub const ON: [Synchronous; 3] = [Synchronous::Normal, Synchronous::Full, Synchronous::Extra];
    const ALL: [Synchronous; 4] = [
        Synchronous::Off,
        Synchronous::Normal,
        Synchronous::Full,
        Synchronous::Extra,
    ];

    pub fn word(self) -> &'static str {
        match self {
            Synchronous::Off => "off",
            Synchronous::Normal => "normal",
            Synchronous::Full => "full",
            Synchronous::Extra => "extra",
        }
    }
}

fn parse_word<T: Copy>(
    key: &str,
    value: &str,
    all: &[T],
    word: fn(T) -> &'static str,
) -> Result<T, String> {
    let v = value.to_ascii_lowercase();
    all.iter().copied().find(|&x| word(x) == v).ok_or_else(|| {
        let expected: Vec<&str> = all.iter().map(|&x| word(x)).collect();
        format!(
            "sqlite option `{key}={value}`: expected one of {}",
            expected.join(", ")
        )
    })
}

/// What a commit in a mode is acknowledged as, by SQLite's own documentation (docs/sqlite.md
/// cites it):
///
/// - WAL with FULL or EXTRA: the WAL is synced at every commit ("Write-Ahead Logging";
///   "PRAGMA synchronous"): durable.
/// - WAL with NORMAL: "a transaction committed in WAL mode with synchronous=NORMAL might roll
///   back following a power loss" — acknowledged only, made durable by a checkpoint or a clean
///   close (capability `close_writes`).
/// - TRUNCATE or PERSIST with FULL or EXTRA: the database is synced, and the journal's reset
///   (truncation, zeroed header) is synced before the commit returns: durable.
/// - DELETE with EXTRA: the directory is synced after the journal's unlink: durable.
/// - DELETE with FULL: the unlink is not synced, and "EXTRA provides additional durability if
///   the commit is followed closely by a power loss": a cut may bring the journal back, hot,
///   and roll the last commit back — acknowledged only (the next commit's journal, whose name is
///   synced, makes it durable).
/// - DELETE or TRUNCATE with NORMAL: the journal's unlink or truncation is not synced (SQLite
///   syncs a truncation only under FULL, "otherwise the journal might resurrect following a
///   power loss and cause the last transaction to roll back"): acknowledged only.
/// - PERSIST with NORMAL: the database is synced and the zeroed journal header too (SQLite
///   syncs it whenever syncs are on): durable. NORMAL syncs the journal once instead of twice,
///   and SQLite warns of "a very small (though non-zero) chance that a power failure at just the
///   wrong time could corrupt the database": that is a corruption risk, not a lost commit, and
///   the sweep reports it if it happens.
/// - The positive controls (`synchronous=off`, `journal_mode=off`): durable, which is what an
///   application that turned them on for speed would still assume, and SQLite says they are not.
pub fn promise(journal: Journal, sync: Synchronous) -> Ack {
    use Journal::{Delete, Persist, Truncate, Wal};
    use Synchronous::{Extra, Full, Normal};
    match (journal, sync) {
        (Journal::Off, _) | (_, Synchronous::Off) => Ack::Durable,
        (Wal | Truncate | Persist, Full | Extra) => Ack::Durable,
        (Delete, Extra) | (Persist, Normal) => Ack::Durable,
        (Delete, Full) => Ack::Acknowledged,
        (Delete | Truncate | Wal, Normal) => Ack::Acknowledged,
    }
}

/// What a seed decides for SQLite.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SqliteChoices {
    pub journal: Journal,
    pub synchronous: Synchronous,
}

impl SqliteChoices {
    /// The modes a seed draws from, each equally likely.
    pub const DRAWN: [SqliteChoices; 9] = [
        SqliteChoices::new(Journal::Delete, Synchronous::Full),
        SqliteChoices::new(Journal::Delete, Synchronous::Extra),
        SqliteChoices::new(Journal::Truncate, Synchronous::Full),
        SqliteChoices::new(Journal::Truncate, Synchronous::Extra),
        SqliteChoices::new(Journal::Persist, Synchronous::Full),
        SqliteChoices::new(Journal::Persist, Synchronous::Extra),
        SqliteChoices::new(Journal::Wal, Synchronous::Normal),
        SqliteChoices::new(Journal::Wal, Synchronous::Full),
        SqliteChoices::new(Journal::Wal, Synchronous::Extra),
    ];

    pub const fn new(journal: Journal, synchronous: Synchronous) -> SqliteChoices {
        SqliteChoices {
            journal,
            synchronous,
        }
    }

    /// A rollback journal with NORMAL: SQLite documents a small chance of corruption there.
    pub fn may_corrupt_by_documentation(&self) -> bool {
        self.synchronous == Synchronous::Normal && self.journal != Journal::Wal
    }

    /// A positive control: a mode SQLite documents as unsafe across a power cut, for which the
    /// adapter still claims durable commits.
    pub fn is_positive_control(&self) -> bool {
        self.journal == Journal::Off || self.synchronous == Synchronous::Off
    }

    /// What each commit is acknowledged as.
    pub fn ack(&self) -> Ack {
        promise(self.journal, self.synchronous)
    }
}

impl fmt::Display for SqliteChoices {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "journal_mode={} synchronous={}",
            self.journal.word(),
            self.synchronous.word()
        )
    }
}

impl EngineConfig for SqliteChoices {
    const ENGINE: &'static str = "sqlite";

    fn from_seed(seed: u64, _profile: Profile) -> SqliteChoices {
        *SimRng::derive(seed, "sqlite").pick(&SqliteChoices::DRAWN)
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities {
            nested_buckets: false,
            // A blob key may be up to SQLITE_MAX_LENGTH (a billion bytes): no key limit near
            // bbolt's.
            refuses_long_keys: false,
            sequences: false,
            live_check: true,
            write_batches: false,
            concurrent_callers: false,
            max_batch_calls: 0,
            reader_views: false,
            // After an I/O error SQLite may keep its pager in the error state until the
            // connection is reset: the application reopens.
            io_error_ends_session: true,
            latches_after_failed_commit: false,
            crash_is_process_crash: false,
            // Not declared, in any mode (every mode has the same capabilities, so a case may
            // name another mode than its seed's). A rollback journal's close writes nothing and
            // leaves an acknowledged-only commit so (DELETE+FULL: the unlink stays unsynced).
            // WAL's close checkpoints and syncs, which would make WAL+NORMAL's commits durable:
            // not claiming it only lets the oracle allow their loss after a clean close too.
            close_writes: false,
            acknowledged_survive_process_crash: true,
            // Page 1 holds the database header.
            meta_region_len: u64::from(SQLITE_PAGE_SIZE),
            page_size: SQLITE_PAGE_SIZE,
            // SQLite's header and pages carry no checksum (a WAL frame's is its own file's).
            checksummed: Checksummed::NONE,
            directory: true,
        }
    }

    fn describe(&self) -> String {
        let ack = match self.ack() {
            Ack::Durable => "durable",
            Ack::Acknowledged => "acknowledged only",
        };
        let control = if self.is_positive_control() {
            " (positive control: claimed durable, documented unsafe)"
        } else if self.may_corrupt_by_documentation() {
            " (not drawn: SQLite documents a small chance of corruption)"
        } else {
            ""
        };
        format!("{self} · commits {ack}{control}")
    }

    fn to_case_text(&self) -> Option<String> {
        Some(self.to_string())
    }

    fn parse_case_text(text: &str, seed: u64, profile: Profile) -> Result<SqliteChoices, String> {
        let mut c = SqliteChoices::from_seed(seed, profile);
        for (k, v) in settings(text)? {
            match k {
                "journal_mode" => c.journal = parse_word(k, v, &Journal::ALL, Journal::word)?,
                "synchronous" => {
                    c.synchronous = parse_word(k, v, &Synchronous::ALL, Synchronous::word)?
                }
                _ => {
                    return Err(format!(
                        "unknown sqlite option `{k}` (expected journal_mode or synchronous)"
                    ))
                }
            }
        }
        Ok(c)
    }

    /// SQLite's xSync is an `fsync` (the bundled build defines `fdatasync` as `fsync`: "we do
    /// not trust systems to provide a working fdatasync()"), which persists the file's size:
    /// the VFS's files run on `with-data` disks.
    fn length_model(&self) -> Option<LengthModel> {
        Some(LengthModel::WithData)
    }

    /// Every drawn mode: `crashlab check --variants`.
    fn variants(&self) -> Result<Vec<SqliteChoices>, String> {
        Ok(SqliteChoices::DRAWN.to_vec())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn case_text_round_trips_every_mode_and_control() {
        for journal in Journal::ALL {
            for synchronous in Synchronous::ALL {
                let c = SqliteChoices::new(journal, synchronous);
                let text = c.to_case_text().unwrap();
                let back = SqliteChoices::parse_case_text(&text, 9, Profile::Default);
                assert_eq!(back, Ok(c), "{text}");
            }
        }
    }

    #[test]
    fn a_bad_option_names_what_was_expected() {
        let e = SqliteChoices::parse_case_text("journal_mode=memory", 0, Profile::Default);
        assert_eq!(
            e.unwrap_err(),
            "sqlite option `journal_mode=memory`: expected one of delete, truncate, persist, \
             wal, off"
        );
        let e = SqliteChoices::parse_case_text("synchronous=2", 0, Profile::Default);
        assert!(e
            .unwrap_err()
            .contains("expected one of off, normal, full, extra"));
        let e = SqliteChoices::parse_case_text("page_size=512", 0, Profile::Default);
        assert_eq!(
            e.unwrap_err(),
            "unknown sqlite option `page_size` (expected journal_mode or synchronous)"
        );
    }

    #[test]
    fn only_the_documented_exceptions_are_acknowledged_only() {
        let acknowledged: Vec<String> = Journal::ALL
            .iter()
            .flat_map(|&j| Synchronous::ALL.map(|s| SqliteChoices::new(j, s)))
            .filter(|c| c.ack() == Ack::Acknowledged)
            .map(|c| c.to_string())
            .collect();
        assert_eq!(
            acknowledged,
            [
                "journal_mode=delete synchronous=normal",
                "journal_mode=delete synchronous=full",
                "journal_mode=truncate synchronous=normal",
                "journal_mode=wal synchronous=normal",
            ]
        );
    }
}
