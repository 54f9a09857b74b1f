//! Buckets as tables, SQLite's errors as the adapter's kinds, and reads in fresh transactions.

use crashlab_models::{BucketModel, KvModel, ModelError};
use crashlab_sim::adapter::{EngineError, ErrorKind, Listing};
use crashlab_sim::op::Path;
use rusqlite::{Connection, ErrorCode, OptionalExtension};

/// Table names are `b_` and the bucket name's bytes in hex: any bytes make a valid identifier,
/// and nothing else in the schema starts with `b_`.
const TABLE_PREFIX: &str = "b_";

/// SQLite's error by kind: an I/O error (disk faults, the power going off) and a full disk are
/// `Io`, what the driver allows; damage SQLite found in what it read is `Corrupt`; the rest
/// (busy, misuse, constraint) is `Other`, which no workload should meet.
///
/// `SQLITE_INTERRUPT` is an I/O error here: `sqlite-vfs` 0.2 answers a failed `xDelete` with
/// `SQLITE_DELETE` (9, an authorizer action code), which SQLite reads as `SQLITE_INTERRUPT`;
/// nothing in crashlab interrupts a statement, so a failed journal delete is the only source.
pub fn kind_of(e: &rusqlite::Error) -> ErrorKind {
    match e.sqlite_error_code() {
        Some(
            ErrorCode::SystemIoFailure
            | ErrorCode::DiskFull
            | ErrorCode::CannotOpen
            | ErrorCode::OperationInterrupted,
        ) => ErrorKind::Io,
        Some(ErrorCode::DatabaseCorrupt | ErrorCode::NotADatabase) => ErrorKind::Corrupt,
        _ => ErrorKind::Other,
    }
}

pub fn err(e: rusqlite::Error) -> EngineError {
    EngineError {
        kind: kind_of(&e),
        message: format!("sqlite: {e}"),
    }
}

pub fn refused(reason: ModelError, what: &str) -> EngineError {
    EngineError {
        kind: ErrorKind::Refused(reason),
        message: format!("sqlite: {what}"),
    }
}

/// The table of a one-component bucket path, as a quoted identifier.
pub fn table(path: &Path) -> Result<String, EngineError> {
    match path.as_slice() {
        [name] => {
            let hex: String = name.0.iter().map(|b| format!("{b:02x}")).collect();
            Ok(format!("\"{TABLE_PREFIX}{hex}\""))
        }
        _ => Err(EngineError::other(format!(
            "sqlite has one table per bucket, no nesting: bucket path of {} components",
            path.len()
        ))),
    }
}

/// The bucket name a table name encodes, if it is one of ours.
fn bucket_of(table: &str) -> Option<Vec<u8>> {
    let hex = table.strip_prefix(TABLE_PREFIX)?;
    if hex.len() % 2 != 0 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).ok())
        .collect()
}

pub fn table_exists(conn: &Connection, quoted: &str) -> Result<bool, EngineError> {
    let bare = quoted.trim_matches('"');
    conn.query_row(
        "SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = ?1",
        [bare],
        |_| Ok(()),
    )
    .optional()
    .map(|r| r.is_some())
    .map_err(err)
}

/// A bucket's rows in key order, or `None` when its table is missing.
pub fn list(conn: &Connection, quoted: &str) -> Result<Option<Listing>, EngineError> {
    if !table_exists(conn, quoted)? {
        return Ok(None);
    }
    let mut stmt = conn
        .prepare(&format!("SELECT k, v FROM {quoted} ORDER BY k"))
        .map_err(err)?;
    let rows = stmt
        .query_map([], |r| Ok((r.get::<_, Vec<u8>>(0)?, Some(r.get(1)?))))
        .map_err(err)?;
    rows.collect::<Result<Listing, _>>().map(Some).map_err(err)
}

pub fn get(conn: &Connection, quoted: &str, key: &[u8]) -> Result<Option<Vec<u8>>, EngineError> {
    if !table_exists(conn, quoted)? {
        return Ok(None);
    }
    conn.query_row(
        &format!("SELECT v FROM {quoted} WHERE k = ?1"),
        [key],
        |r| r.get(0),
    )
    .optional()
    .map_err(err)
}

/// Everything the database holds, as a model.
pub fn read_all(conn: &Connection) -> Result<KvModel, EngineError> {
    let mut names = Vec::new();
    {
        let mut stmt = conn
            .prepare("SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name")
            .map_err(err)?;
        let rows = stmt.query_map([], |r| r.get::<_, String>(0)).map_err(err)?;
        for name in rows {
            names.push(name.map_err(err)?);
        }
    }
    let mut m = KvModel::new();
    for name in names {
        let Some(bucket) = bucket_of(&name) else {
            continue;
        };
        let rows = list(conn, &format!("\"{name}\""))?.unwrap_or_default();
        let b: &mut BucketModel = m.root.buckets.entry(bucket).or_default();
        for (k, v) in rows {
            b.values.insert(k, v.unwrap_or_default());
        }
    }
    Ok(m)
}

/// `f` in a fresh read transaction (`BEGIN` … `COMMIT`): one snapshot of the database.
pub fn in_read_tx<T>(
    conn: &Connection,
    f: impl FnOnce(&Connection) -> Result<T, EngineError>,
) -> Result<T, EngineError> {
    debug_assert!(conn.is_autocommit(), "a read transaction inside another");
    conn.execute_batch("BEGIN DEFERRED").map_err(err)?;
    match f(conn) {
        Ok(v) => {
            conn.execute_batch("COMMIT").map_err(err)?;
            Ok(v)
        }
        Err(e) => {
            // SQLite may have ended the transaction itself after an I/O error.
            if !conn.is_autocommit() {
                let _ = conn.execute_batch("ROLLBACK");
            }
            Err(e)
        }
    }
}

/// `PRAGMA integrity_check`: every problem line, empty when SQLite answers `ok`. Damage that
/// stops the check itself is a problem too; an I/O error is an error.
///
/// SQLite reports a page it could not read as a line of the check's answer, not as an error
/// code: `failed to get page N` (a freelist or overflow list) and `unable to get the page.
/// error code=N` (a b-tree page), both from a failed page fetch, which for a page number in
/// range is the VFS's read failing (a latent sector, a read EIO). That is the disk failing, not
/// damage in the file: it is an I/O error here, as crashlab's engine and redb report it.
/// (Seed 8774 of the default profile, DELETE+FULL, was a violation until this: a read EIO on a
/// freelist trunk page read as "Freelist: failed to get page 26" and five "never used" pages.)
pub fn integrity_check(conn: &Connection) -> Result<Vec<String>, EngineError> {
    let lines: Result<Vec<String>, rusqlite::Error> = (|| {
        let mut stmt = conn.prepare("PRAGMA integrity_check")?;
        let rows = stmt.query_map([], |r| r.get::<_, String>(0))?;
        rows.collect()
    })();
    if let Ok(lines) = &lines {
        if let Some(unread) = lines.iter().find(|l| is_read_failure(l)) {
            return Err(EngineError {
                kind: ErrorKind::Io,
                message: format!("sqlite integrity_check could not read a page: {unread}"),
            });
        }
    }
    match lines {
        Ok(lines) if lines == ["ok"] => Ok(Vec::new()),
        Ok(lines) => Ok(lines
            .into_iter()
            .map(|l| format!("sqlite integrity_check: {l}"))
            .collect()),
        Err(e) if kind_of(&e) == ErrorKind::Corrupt => {
            Ok(vec![format!("sqlite integrity_check stopped: {e}")])
        }
        Err(e) => Err(err(e)),
    }
}

/// Whether a line of `integrity_check`'s answer is a page SQLite failed to read (see
/// [`integrity_check`]): the message of a failed page fetch, not of damage found in a page.
fn is_read_failure(line: &str) -> bool {
    line.contains("failed to get page") || line.contains("unable to get the page. error code=")
}

#[cfg(test)]
mod tests {
    use super::is_read_failure;

    /// The lines are SQLite's own (`checkList` and `checkTreePage` in the bundled sqlite3.c):
    /// the two page-fetch failures are read failures, damage found in a read page is not.
    #[test]
    fn a_page_sqlite_failed_to_read_is_told_from_damage() {
        assert!(is_read_failure(
            "*** in database main ***\nFreelist: failed to get page 26"
        ));
        assert!(is_read_failure(
            "Tree 3 page 5: unable to get the page. error code=266"
        ));
        for damage in [
            "Page 37: never used",
            "Tree 3 page 5: btreeInitPage() returns error code 11",
            "Freelist: size is 3 but should be 4",
            "Tree 2 page 4 cell 0: Rowid 7 out of order",
        ] {
            assert!(!is_read_failure(damage), "{damage}");
        }
    }
}
