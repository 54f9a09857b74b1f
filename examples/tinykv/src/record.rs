//! One committed transaction on disk: a record of the log.
//!
//! ```text
//! offset  size  field
//!      0     4  magic        "TKV1" (0x3156_4b54 little-endian)
//!      4     4  payload_len  bytes of payload that follow the header
//!      8     8  txid         1 for the first record, +1 for each one after
//!     16     8  checksum     xxh3-64 of bytes 4..16 and the payload
//!     24     -  payload      the transaction's changes, one after another
//! ```
//!
//! A change is a tag byte and length-prefixed (u32 LE) byte strings: `1 table` creates a table,
//! `2 table` drops one, `3 table key value` puts, `4 table key` deletes. Every integer is little
//! endian. Bytes read back are untrusted: decoding checks every length against what is left and
//! returns a typed error, never panics.

use std::fmt;

/// "TKV1".
pub const MAGIC: u32 = u32::from_le_bytes(*b"TKV1");
/// Header bytes before the payload.
pub const HEADER_LEN: usize = 24;
/// The largest payload one record may hold: bounds what recovery allocates for a header it
/// reads, whatever the header says (the file's length bounds it too).
pub const PAYLOAD_LEN_MAX: u32 = 64 << 20;

/// One change of a transaction.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Change {
    CreateTable(Vec<u8>),
    DropTable(Vec<u8>),
    Put {
        table: Vec<u8>,
        key: Vec<u8>,
        value: Vec<u8>,
    },
    Delete {
        table: Vec<u8>,
        key: Vec<u8>,
    },
}

/// A record's header as read from disk, before its payload is trusted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    pub magic: u32,
    pub payload_len: u32,
    pub txid: u64,
    pub checksum: u64,
}

impl Header {
    pub fn parse(bytes: &[u8; HEADER_LEN]) -> Header {
        let u32_at =
            |i: usize| u32::from_le_bytes([bytes[i], bytes[i + 1], bytes[i + 2], bytes[i + 3]]);
        let u64_at = |i: usize| {
            let mut b = [0u8; 8];
            b.copy_from_slice(&bytes[i..i + 8]);
            u64::from_le_bytes(b)
        };
        Header {
            magic: u32_at(0),
            payload_len: u32_at(4),
            txid: u64_at(8),
            checksum: u64_at(16),
        }
    }

    /// The record's whole length on disk.
    pub fn record_len(&self) -> u64 {
        HEADER_LEN as u64 + u64::from(self.payload_len)
    }
}

/// What the checksum covers: the length, the txid and the payload.
pub fn checksum(payload_len: u32, txid: u64, payload: &[u8]) -> u64 {
    let mut h = xxhash_rust::xxh3::Xxh3::new();
    h.update(&payload_len.to_le_bytes());
    h.update(&txid.to_le_bytes());
    h.update(payload);
    h.digest()
}

/// The record of transaction `txid` holding `changes`.
pub fn encode(txid: u64, changes: &[Change]) -> Vec<u8> {
    let mut payload = Vec::new();
    for c in changes {
        match c {
            Change::CreateTable(t) => put_strs(&mut payload, 1, &[t]),
            Change::DropTable(t) => put_strs(&mut payload, 2, &[t]),
            Change::Put { table, key, value } => put_strs(&mut payload, 3, &[table, key, value]),
            Change::Delete { table, key } => put_strs(&mut payload, 4, &[table, key]),
        }
    }
    let len = u32::try_from(payload.len()).expect("a transaction fits a u32 payload");
    assert!(
        len <= PAYLOAD_LEN_MAX,
        "a {len}-byte transaction is past the record limit"
    );
    let mut out = Vec::with_capacity(HEADER_LEN + payload.len());
    out.extend_from_slice(&MAGIC.to_le_bytes());
    out.extend_from_slice(&len.to_le_bytes());
    out.extend_from_slice(&txid.to_le_bytes());
    out.extend_from_slice(&checksum(len, txid, &payload).to_le_bytes());
    out.extend_from_slice(&payload);
    out
}

fn put_strs(out: &mut Vec<u8>, tag: u8, strs: &[&Vec<u8>]) {
    out.push(tag);
    for s in strs {
        let len = u32::try_from(s.len()).expect("a key or value fits a u32 length");
        out.extend_from_slice(&len.to_le_bytes());
        out.extend_from_slice(s);
    }
}

/// Why a payload does not decode.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DecodeError {
    /// Byte offset inside the payload.
    pub at: usize,
    pub reason: &'static str,
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} at payload byte {}", self.reason, self.at)
    }
}

/// The changes a payload holds.
pub fn decode(payload: &[u8]) -> Result<Vec<Change>, DecodeError> {
    let mut r = Reader {
        bytes: payload,
        at: 0,
    };
    let mut out = Vec::new();
    while r.at < payload.len() {
        let tag_at = r.at;
        let change = match r.byte()? {
            1 => Change::CreateTable(r.str()?),
            2 => Change::DropTable(r.str()?),
            3 => Change::Put {
                table: r.str()?,
                key: r.str()?,
                value: r.str()?,
            },
            4 => Change::Delete {
                table: r.str()?,
                key: r.str()?,
            },
            _ => {
                return Err(DecodeError {
                    at: tag_at,
                    reason: "unknown change tag",
                })
            }
        };
        out.push(change);
    }
    Ok(out)
}

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn take(&mut self, n: usize) -> Result<&[u8], DecodeError> {
        let end = self.at.checked_add(n).filter(|&e| e <= self.bytes.len());
        let end = end.ok_or(DecodeError {
            at: self.at,
            reason: "length past the end of the payload",
        })?;
        let s = &self.bytes[self.at..end];
        self.at = end;
        Ok(s)
    }

    fn byte(&mut self) -> Result<u8, DecodeError> {
        Ok(self.take(1)?[0])
    }

    fn str(&mut self) -> Result<Vec<u8>, DecodeError> {
        let b = self.take(4)?;
        let len = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
        let len = usize::try_from(len).map_err(|_| DecodeError {
            at: self.at,
            reason: "length does not fit in memory",
        })?;
        Ok(self.take(len)?.to_vec())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_round_trips_and_its_checksum_covers_the_payload() {
        let changes = vec![
            Change::CreateTable(b"t".to_vec()),
            Change::Put {
                table: b"t".to_vec(),
                key: b"k".to_vec(),
                value: vec![7; 300],
            },
            Change::Delete {
                table: b"t".to_vec(),
                key: b"k".to_vec(),
            },
            Change::DropTable(b"t".to_vec()),
        ];
        let rec = encode(9, &changes);
        let mut head = [0u8; HEADER_LEN];
        head.copy_from_slice(&rec[..HEADER_LEN]);
        let h = Header::parse(&head);
        assert_eq!((h.magic, h.txid), (MAGIC, 9));
        assert_eq!(h.record_len(), rec.len() as u64);
        let payload = &rec[HEADER_LEN..];
        assert_eq!(h.checksum, checksum(h.payload_len, 9, payload));
        assert_eq!(decode(payload), Ok(changes));
        let mut flipped = payload.to_vec();
        flipped[5] ^= 1;
        assert_ne!(h.checksum, checksum(h.payload_len, 9, &flipped));
    }

    #[test]
    fn damaged_payloads_are_typed_errors() {
        assert_eq!(decode(&[0]).unwrap_err().reason, "unknown change tag");
        let too_long = [1, 0xff, 0xff, 0xff, 0x7f, b'x'];
        let e = decode(&too_long).unwrap_err();
        assert_eq!((e.at, e.reason), (5, "length past the end of the payload"));
        assert_eq!(decode(&[3, 1, 0, 0]).unwrap_err().at, 1);
    }
}
