//! Reading the log back: every record from offset 0 up to the first one that is not whole.

use crate::record::{self, Header, HEADER_LEN, MAGIC, PAYLOAD_LEN_MAX};
use crate::{apply, Disk, Error, Tables};

/// What the log holds.
pub(crate) struct Log {
    pub tables: Tables,
    /// The end of the last valid record.
    pub end: u64,
    pub next_txid: u64,
}

/// Replay the log in `disk`. A record ends the log unless it has the magic, fits inside the
/// file, carries the next txid and (unless `skip_checksum`, the planted bug) matches its
/// checksum; a record that passes all that but does not decode or apply is corruption.
pub(crate) fn scan<D: Disk>(disk: &D, skip_checksum: bool) -> Result<Log, Error> {
    let len = disk.len()?;
    let mut log = Log {
        tables: Tables::new(),
        end: 0,
        next_txid: 1,
    };
    while let Some(payload) = next_record(disk, len, &log, skip_checksum)? {
        let corrupt = |reason: String| Error::Corrupt {
            offset: log.end,
            reason,
        };
        let changes = record::decode(&payload).map_err(|e| corrupt(e.to_string()))?;
        for c in &changes {
            apply(&mut log.tables, c).map_err(|e| corrupt(format!("{c:?} does not apply: {e}")))?;
        }
        log.end += (HEADER_LEN + payload.len()) as u64;
        log.next_txid += 1;
    }
    Ok(log)
}

/// The payload of the record at `log.end`, or `None` where the log ends.
fn next_record<D: Disk>(
    disk: &D,
    len: u64,
    log: &Log,
    skip_checksum: bool,
) -> Result<Option<Vec<u8>>, Error> {
    if len.saturating_sub(log.end) < HEADER_LEN as u64 {
        return Ok(None);
    }
    let mut head = [0u8; HEADER_LEN];
    disk.read_at(log.end, &mut head)?;
    let h = Header::parse(&head);
    let fits = h.payload_len <= PAYLOAD_LEN_MAX && h.record_len() <= len - log.end;
    if h.magic != MAGIC || !fits || h.txid != log.next_txid {
        return Ok(None);
    }
    // Bounded by the file's length and PAYLOAD_LEN_MAX, checked above.
    let mut payload = vec![0u8; h.payload_len as usize];
    disk.read_at(log.end + HEADER_LEN as u64, &mut payload)?;
    if !skip_checksum && record::checksum(h.payload_len, h.txid, &payload) != h.checksum {
        return Ok(None); // torn by a crash: the commit never returned
    }
    Ok(Some(payload))
}
