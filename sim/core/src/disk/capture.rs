//! Capturing the disks a run creates, so a caller can keep what a run left on its disk without
//! the runner knowing: `crashlab repro --save-image` saves it for `crashlab db`.
//!
//! The list is thread-local and active only inside [`capture`]. That sees every disk of a run
//! because a simulation runs on the thread that starts it: madsim's runtime blocks on the
//! caller's thread and refuses to spawn others.

use super::SimDisk;
use std::cell::RefCell;
use std::io;
use std::path::Path;

thread_local! {
    static CAPTURED: RefCell<Option<Vec<SimDisk>>> = const { RefCell::new(None) };
}

/// Run `f`; return its result and every disk created on this thread meanwhile, oldest first.
pub fn capture<T>(f: impl FnOnce() -> T) -> (T, Vec<SimDisk>) {
    let outer = CAPTURED.with(|c| c.replace(Some(Vec::new())));
    let out = f();
    let disks = CAPTURED.with(|c| c.replace(outer)).unwrap_or_default();
    (out, disks)
}

/// Called by [`SimDisk::new`].
pub(super) fn created(disk: &SimDisk) {
    CAPTURED.with(|c| {
        if let Some(list) = c.borrow_mut().as_mut() {
            list.push(disk.clone());
        }
    });
}

/// Write `disk`'s durable image (what a power cut now would leave) to `path`; returns its length.
pub fn save_durable_image(disk: &SimDisk, path: &Path) -> io::Result<usize> {
    let image = disk.durable_image();
    std::fs::write(path, &image)?;
    Ok(image.len())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::disk::DiskConfig;
    use crashlab_engine::Storage;

    #[test]
    fn captures_disks_created_inside_only() {
        let _before = SimDisk::new(1, DiskConfig::default());
        let ((), disks) = capture(|| {
            let d = SimDisk::new(2, DiskConfig::default());
            d.write_at(0, b"synced").unwrap();
            d.sync().unwrap();
            d.write_at(0, b"pending").unwrap();
        });
        let _after = SimDisk::new(3, DiskConfig::default());
        assert_eq!(disks.len(), 1);
        assert_eq!(disks[0].seed(), 2);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("image");
        assert_eq!(save_durable_image(&disks[0], &path).unwrap(), 6);
        assert_eq!(std::fs::read(&path).unwrap(), b"synced");
    }
}
