//! What an engine declares it can do: the drivers and the generators read it, and leave out
//! what an engine lacks instead of faking it.

/// What an engine can do, declared once per configuration. The default is the smallest engine
/// the driver can run: flat buckets, one transaction at a time, power cuts, no extras.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Capabilities {
    /// Buckets inside buckets (crashlab's); otherwise workloads use top-level buckets only.
    /// Nesting stops at the model's `BUCKET_DEPTH_MAX`: a bucket deeper is refused.
    pub nested_buckets: bool,
    /// Keys and bucket names longer than the model's `KEY_LEN_MAX` (bbolt's `MaxKeySize`) are
    /// refused with [`ModelError::KeyTooLarge`](crate::adapter::ModelError::KeyTooLarge):
    /// workloads then put keys and create buckets at the limit and one byte past it. An engine
    /// without this limit is never given a key past it.
    pub refuses_long_keys: bool,
    /// [`Engine::next_sequence`](super::Engine::next_sequence) and `set-seq`: a per-bucket
    /// sequence (bbolt's `NextSequence`).
    pub sequences: bool,
    /// [`Engine::check_live`](super::Engine::check_live): the integrity check runs on the open
    /// database, beside its readers, between transactions.
    pub live_check: bool,
    /// [`Engine::commit_batch`](super::Engine::commit_batch): a transaction's puts and deletes
    /// committed as one write batch.
    pub write_batches: bool,
    /// [`Engine::run_group`](super::Engine::run_group): concurrent callers coalesced into shared
    /// commits (bbolt's `Batch`).
    pub concurrent_callers: bool,
    /// With `concurrent_callers`: the most calls one commit of the coalescer holds (0: no
    /// limit), which bounds the schedules the checker visits.
    pub max_batch_calls: u32,
    /// [`Engine::reader_token`](super::Engine::reader_token) and
    /// [`Engine::read_view`](super::Engine::read_view): the checker can read what an open reader
    /// sees at a crash point from the page cache.
    pub reader_views: bool,
    /// After any I/O error the application must close and reopen before using the database
    /// again (redb: "Previous I/O error occurred. Please close and re-open the database").
    pub io_error_ends_session: bool,
    /// After a commit fails, every later write on the same handle fails with
    /// [`ErrorKind::Latched`](crate::adapter::ErrorKind::Latched) and nothing reaches the disk
    /// until it is reopened (crashlab's latch): what an application that retries or carries on
    /// after a failed commit may rely on, and what the driver then checks.
    pub latches_after_failed_commit: bool,
    /// A crash is a process crash (the page cache survives), not a power cut: an engine with
    /// syncs off makes no promise across a power cut.
    pub crash_is_process_crash: bool,
    /// A process crash keeps every acknowledged commit (the page cache survives it). redb keeps
    /// a `Durability::None` commit's header in memory only, so a crash may lose it, as it
    /// documents: the checker then judges a process crash like a power cut.
    pub acknowledged_survive_process_crash: bool,
    /// A clean close may write (redb makes non-durable commits durable there): the checker
    /// records it like a commit, the runner treats a failed close like a power cut.
    pub close_writes: bool,
    /// Bytes at the start of the file that hold the engine's meta or header: the `no-barrier`
    /// control keeps the syncs that follow writes there and drops the others.
    pub meta_region_len: u64,
    /// The engine's page size: the checker enumerates page-level subsets of pending sectors.
    pub page_size: u32,
    /// Ranges of the file the engine covers by a checksum it verifies before trusting them:
    /// the driver's checksum probe flips a bit in each and expects what the range lost gives.
    pub checksummed: Checksummed,
    /// The engine keeps several files in one directory (a journal or a WAL beside the
    /// database): the driver opens it with [`Engine::open_dir`](super::Engine::open_dir) on a
    /// [`SimDir`](crate::fs::SimDir), and a power cut is the file system's — metadata
    /// operations pending since the last directory sync may be lost, as its model says.
    pub directory: bool,
}

impl Default for Capabilities {
    fn default() -> Capabilities {
        Capabilities {
            nested_buckets: false,
            refuses_long_keys: false,
            sequences: false,
            live_check: false,
            write_batches: false,
            concurrent_callers: false,
            max_batch_calls: 0,
            reader_views: false,
            io_error_ends_session: true,
            latches_after_failed_commit: false,
            crash_is_process_crash: false,
            close_writes: false,
            acknowledged_survive_process_crash: true,
            meta_region_len: 4096,
            page_size: 4096,
            checksummed: Checksummed::NONE,
            directory: false,
        }
    }
}

/// Byte ranges of a single-file engine's file, each covered whole by a checksum the engine
/// verifies before it trusts a byte of it (crashlab's two metas, bbolt's layout). The promise
/// an engine makes by declaring a range: a range whose checksum fails is treated exactly as a
/// range that was never written (zeroed) — it falls back, or it refuses — so a flipped bit in
/// it changes nothing a zeroed range would not. Declare only ranges the engine rejects when
/// zeroed (a magic number, a checksum that zeros do not satisfy).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Checksummed {
    /// `(offset, len)` of each range; the first `count` are used.
    ranges: [(u64, u64); Checksummed::MAX],
    count: usize,
}

impl Checksummed {
    /// The most ranges an engine declares.
    pub const MAX: usize = 4;
    /// No checksummed range: the probe does not run.
    pub const NONE: Checksummed = Checksummed {
        ranges: [(0, 0); Checksummed::MAX],
        count: 0,
    };

    /// The ranges `(offset, len)`, each non-empty, at most [`Checksummed::MAX`].
    pub fn of(ranges: &[(u64, u64)]) -> Checksummed {
        assert!(ranges.len() <= Self::MAX, "at most {} ranges", Self::MAX);
        assert!(ranges.iter().all(|&(_, len)| len > 0), "empty range");
        let mut c = Checksummed::NONE;
        c.ranges[..ranges.len()].copy_from_slice(ranges);
        c.count = ranges.len();
        c
    }

    /// Each range as byte offsets.
    pub fn ranges(&self) -> impl Iterator<Item = std::ops::Range<u64>> + '_ {
        self.ranges[..self.count]
            .iter()
            .map(|&(at, len)| at..at + len)
    }

    pub fn is_empty(&self) -> bool {
        self.count == 0
    }
}
