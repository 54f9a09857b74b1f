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
/// The last transaction id a commit may take. A commit's txid is the previous meta's + 1 and
/// picks its meta slot by `txid % 2`; wrapping past this would write a meta whose txid is lower
/// than the one it replaces, so the next open would choose the stale meta whose pages this
/// commit reused. A write transaction on a meta already at this txid is refused
/// (`Error::TxIdExhausted`) before anything is written, and `check()` reports such a meta.
pub const MAX_TXID: u64 = u64::MAX;
/// Most page ids a structure that holds one entry per free page may hold: the array freelist
/// (bbolt's design, kept for its cost behaviour) and the freelist page, 8 bytes an id. 2^20 ids
/// are 8 MiB, a fully free 4 GiB file of 4 KiB pages. Past it open and commit fail with
/// `Error::TooManyFreeIds` instead of allocating in proportion to a count a file claims (a
/// sparse 1 TiB file says 2^28 free pages in 48 KiB). The bound is on what a claim can cost
/// whatever the file holds: a commit that persists a freelist holds the free set, the id list,
/// the page image and the commit's write buffer at once, four times 8 MiB at most. The hashmap
/// freelist keeps free pages as spans and is not bound by it (open such a file with it and
/// `no_freelist_sync`), and neither a read-only open (it loads no freelist) nor `check()` needs
/// one id per free page.
pub const MAX_FREE_IDS: u64 = 1 << 20;

// Counts that need no constant of their own, because they are checked against what the file
// holds before memory grows (see `pager.rs` and `FORMAT.md` §6): a run's overflow count against
// the pages its contents use; a node's element count against its run; its elements' bytes
// against the run (they may not overlap); a freelist page's id count against its run and
// `MAX_FREE_IDS`.
