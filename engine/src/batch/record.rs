//! A write batch's record layout (drawn in `write_batch.rs`'s header): the sizes and tags every
//! encoder and the decoder share, the decoded [`Record`], and [`MalformedBatch`], the decoder's
//! error. Both `write_batch.rs` (which encodes) and `decode.rs` (which checks) build on this file
//! and on nothing of each other's but `validate` and the reader.

use crashlab_format::limits::MAX_BUCKET_DEPTH;

/// Bytes of the header: the record count, u32 LE.
pub const HEADER_SIZE: usize = 4;
pub const TAG_PUT: u8 = 1;
pub const TAG_DELETE: u8 = 2;
/// Bytes of a length prefix (u32 LE) before a component, key or value.
pub const LEN_PREFIX_SIZE: usize = 4;

const _: () = assert!(MAX_BUCKET_DEPTH >= 1 && MAX_BUCKET_DEPTH <= u8::MAX as usize);

/// One operation of a batch. Borrowed from the batch's buffer when decoded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Record<'a> {
    Put {
        path: Vec<&'a [u8]>,
        key: &'a [u8],
        value: &'a [u8],
    },
    Delete {
        path: Vec<&'a [u8]>,
        key: &'a [u8],
    },
}

impl Record<'_> {
    /// Bytes of this record's encoding.
    pub fn encoded_size(&self) -> usize {
        let (path, key, value) = match self {
            Record::Put { path, key, value } => (path, key, Some(value)),
            Record::Delete { path, key } => (path, key, None),
        };
        record_size(path, key.len(), value.map(|v| v.len()))
    }
}

/// Bytes of a record's encoding: tag, component count, the path, the key and a put's value.
pub(super) fn record_size(path: &[&[u8]], key_len: usize, value_len: Option<usize>) -> usize {
    let path_size: usize = path.iter().map(|c| LEN_PREFIX_SIZE + c.len()).sum();
    let value_size = value_len.map_or(0, |v| LEN_PREFIX_SIZE + v);
    2 + path_size + LEN_PREFIX_SIZE + key_len + value_size
}

/// Why bytes are not a valid batch.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("malformed write batch at byte {offset}: {reason}")]
pub struct MalformedBatch {
    /// Offset of the field that is wrong (or of the end, when bytes are missing).
    pub offset: usize,
    pub reason: String,
}
