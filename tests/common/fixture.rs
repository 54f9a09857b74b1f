//! bbolt fixtures from `corpus/bbolt/` and the meta rewrites that the regression tests make of
//! them: a file whose metas claim what its contents do not hold.

use crashlab_engine::Db;
use crashlab_format::meta::fnv1a64;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

/// The bytes of fixture `corpus/bbolt/NAME`.
pub fn bbolt_fixture(name: &str) -> Vec<u8> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("corpus/bbolt")
        .join(name);
    std::fs::read(&path).unwrap_or_else(|e| panic!("fixture {}: {e}", path.display()))
}

/// The value of `key` in top-level bucket `bucket`, copied out (the bucket must exist).
pub fn get(db: &Db, bucket: &[u8], key: &[u8]) -> Option<Vec<u8>> {
    db.view(|tx| {
        tx.bucket(bucket)?
            .expect("bucket")
            .get(key)
            .map(|v| v.map(|v| v.to_vec()))
    })
    .unwrap()
}

/// What [`claim`] writes into both metas of a 4 KiB-page file.
pub struct Claim {
    /// The high-water mark (meta offset 56).
    pub high_water: u64,
    /// Set the freelist page (offset 48) to `u64::MAX`: no persisted freelist.
    pub drop_freelist: bool,
    /// The file's new length in bytes: past its data the file is sparse.
    pub len: u64,
}

/// Rewrite both metas of the file at `path` as `claim` says, their checksums (FNV-1a of bytes
/// 16..72 at 72) recomputed so they validate, then set the file's length.
pub fn claim(path: &Path, claim: Claim) {
    let f = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(path)
        .unwrap();
    for slot in 0..2u64 {
        let mut m = [0u8; 80];
        f.read_exact_at(&mut m, slot * 4096).unwrap();
        if claim.drop_freelist {
            m[48..56].copy_from_slice(&u64::MAX.to_le_bytes());
        }
        m[56..64].copy_from_slice(&claim.high_water.to_le_bytes());
        let sum = fnv1a64(&m[16..72]);
        m[72..80].copy_from_slice(&sum.to_le_bytes());
        f.write_all_at(&m, slot * 4096).unwrap();
    }
    f.set_len(claim.len).unwrap();
}

/// `file` written to `dir/name`, both metas claiming `high_water` pages of 4 KiB (their
/// freelist page kept), the file stretched sparse to hold them.
pub fn stretched(dir: &Path, name: &str, file: &[u8], high_water: u64) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, file).unwrap();
    let len = high_water * 4096;
    let drop_freelist = false;
    claim(
        &path,
        Claim {
            high_water,
            drop_freelist,
            len,
        },
    );
    path
}

/// Whether the meta in `slot` of the fixture bytes `file` persists no freelist.
pub fn persists_no_freelist(file: &[u8], slot: usize) -> bool {
    file[slot * 4096 + 48..slot * 4096 + 56] == u64::MAX.to_le_bytes()
}
