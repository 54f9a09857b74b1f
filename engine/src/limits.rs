//! Limits on everything that could otherwise grow without bound, with the reason for each.

/// bbolt's maximum key size: a key must fit the u32 `ksize` and stay far below a page run.
pub const MAX_KEY_SIZE: usize = 32768;
/// bbolt's maximum value size (`vsize` is u32; bbolt keeps it below 2^31 − 1).
pub const MAX_VALUE_SIZE: usize = (1 << 31) - 2;
/// Deepest B+tree accepted inside one bucket. A tree of 2-key nodes this deep would address
/// 2^64 pages, so anything deeper is a reference cycle or corruption, not data.
pub const MAX_TREE_DEPTH: usize = 64;
/// Deepest bucket nesting accepted. Commit and deletion recurse once per nesting level, so the
/// bound keeps the stack small whatever a file claims.
pub const MAX_BUCKET_DEPTH: usize = 64;
