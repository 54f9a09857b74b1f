//! The engine's storage: the [`Storage`] trait (its contract is documented where it is defined,
//! in `crashlab_format::storage`, so that the untrusting page reader below the engine can read
//! through it too) and the two implementations the engine ships.

pub use crashlab_format::storage::{contract, Storage};

mod file;
mod mem;

pub use file::FileStorage;
pub use mem::MemStorage;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mem_storage_keeps_the_contract() {
        contract::check(&MemStorage::new());
    }

    #[test]
    fn file_storage_keeps_the_contract() {
        let dir = tempfile::tempdir().unwrap();
        let f = FileStorage::create(dir.path().join("db")).unwrap();
        contract::check(&f);
    }
}
