//! A hash of a session's files that is a function of the seed alone.
//!
//! SQLite draws the rollback journal's nonce and the WAL's salts from its process-global PRNG,
//! and checksums journal records and WAL frames with them: the journal's and the WAL's bytes
//! depend on what ran before in the process. The database file holds no PRNG output (pages and
//! the header's counters only). So the hash covers every file's name and length and the
//! database file's bytes, and leaves out the journal's and the WAL's bytes.

use crate::vfs::DB_FILE;
use crashlab_sim::disk::ImageHasher;
use crashlab_sim::fs::SimFs;

/// The image hash (xxh3, as every engine's) over the directory: every name and length, the
/// database file's bytes.
pub fn image_hash(fs: &SimFs) -> u64 {
    let mut h = ImageHasher::new();
    for (name, bytes) in fs.images() {
        h.update(name.as_bytes());
        h.update(&(bytes.len() as u64).to_le_bytes());
        if name == DB_FILE {
            h.update(&bytes);
        }
    }
    h.digest()
}
