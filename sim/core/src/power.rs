//! The power switch: a power cut at an exact storage call. From the cut until the driver
//! "reboots" (crashes the disk and resets the switch) every call fails, as the machine is off.

use crashlab_engine::Storage;
use std::io;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;

/// Cuts the power after a set number of storage calls: from then on every call fails, as the
/// machine is off, until the runner "reboots" (crashes the disk and disarms the switch).
#[derive(Clone, Default)]
pub struct PowerSwitch {
    /// Calls left before the cut; negative when disarmed; 0 when the power is off.
    countdown: Arc<AtomicI64>,
}

impl PowerSwitch {
    pub fn new() -> PowerSwitch {
        PowerSwitch {
            countdown: Arc::new(AtomicI64::new(-1)),
        }
    }

    pub fn arm(&self, calls: u32) {
        self.countdown
            .store(i64::from(calls.max(1)), Ordering::Relaxed);
    }

    /// The power goes off now: every later call fails until [`PowerSwitch::reset`].
    pub fn cut(&self) {
        self.countdown.store(0, Ordering::Relaxed);
    }

    pub fn reset(&self) {
        self.countdown.store(-1, Ordering::Relaxed);
    }

    pub fn is_off(&self) -> bool {
        self.countdown.load(Ordering::Relaxed) == 0
    }

    /// Account one call; `Err` when the power is off (this call included if it hit zero).
    pub(crate) fn tick(&self) -> io::Result<()> {
        let left = self.countdown.load(Ordering::Relaxed);
        if left > 0 {
            self.countdown.store(left - 1, Ordering::Relaxed);
        }
        if left == 0 || left == 1 {
            return Err(io::Error::other("power lost"));
        }
        Ok(())
    }
}

impl std::fmt::Debug for PowerSwitch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PowerSwitch")
            .field("off", &self.is_off())
            .finish_non_exhaustive()
    }
}

/// A storage behind a power switch.
#[derive(Debug)]
pub struct Switched<S> {
    pub inner: S,
    pub switch: PowerSwitch,
}

impl<S: Storage> Storage for Switched<S> {
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        self.switch.tick()?;
        self.inner.read_at(offset, buf)
    }
    fn write_at(&self, offset: u64, buf: &[u8]) -> io::Result<()> {
        self.switch.tick()?;
        self.inner.write_at(offset, buf)
    }
    fn sync(&self) -> io::Result<()> {
        self.switch.tick()?;
        self.inner.sync()
    }
    fn len(&self) -> io::Result<u64> {
        self.inner.len()
    }
    fn set_len(&self, len: u64) -> io::Result<()> {
        self.switch.tick()?;
        self.inner.set_len(len)
    }
}
