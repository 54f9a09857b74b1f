//! The storage calls of a simulated disk — read, write, sync, `set_len` — with the faults each
//! can inject, as the fault table in [`super`] describes them.

use super::{eio, too_large, Inner, LengthModel, SIM_DISK_LEN_MAX};
use std::io;

impl Inner {
    /// The end of `offset..offset + n`, asserting the caller's arithmetic.
    fn end_of(offset: u64, n: usize, call: &str) -> u64 {
        offset.checked_add(n as u64).unwrap_or_else(|| {
            panic!("{call}: offset {offset} + length {n} overflows u64 (caller bug)")
        })
    }

    /// `Err(StorageFull)` (counted) when `end` is past the configured capacity.
    fn check_capacity(&mut self, end: u64) -> io::Result<()> {
        match self.config.faults.enospc_capacity {
            Some(capacity) if end > capacity => {
                self.counts.enospc += 1;
                self.fault("enospc", end, 0);
                Err(io::Error::new(
                    io::ErrorKind::StorageFull,
                    format!("simulated ENOSPC: end {end} past capacity {capacity}"),
                ))
            }
            _ => Ok(()),
        }
    }

    pub(super) fn read_at(&mut self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        let end = Self::end_of(offset, buf.len(), "read_at");
        self.stats.reads += 1;
        self.stats
            .charge(self.config.cost.read_ns(buf.len() as u64));
        if end > self.sectors.len() {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                format!(
                    "read of {offset}..{end} past the end {}",
                    self.sectors.len()
                ),
            ));
        }
        if self.rng.chance(self.config.faults.read_eio) {
            self.counts.read_eio += 1;
            self.fault("read_eio", offset, buf.len() as u64);
            return Err(eio(&format!("read of {offset}..{end}")));
        }
        let range = self.sectors.range_sectors(offset, buf.len() as u64);
        if let Some(&bad) = self.latent.range(range).next() {
            self.counts.latent_read_errors += 1;
            self.fault(
                "latent_read",
                bad * self.sectors.sector_size(),
                buf.len() as u64,
            );
            return Err(eio(&format!("latent sector error at sector {bad}")));
        }
        let never_written = self.sectors.read(offset, buf);
        if self.sectors.fill.garbage {
            self.counts.garbage_sector_reads += never_written;
        }
        self.stats.bytes_read += buf.len() as u64;
        Ok(())
    }

    pub(super) fn write_at(&mut self, offset: u64, buf: &[u8]) -> io::Result<()> {
        let n = buf.len() as u64;
        let end = Self::end_of(offset, buf.len(), "write_at");
        self.stats.writes += 1;
        self.grew = false;
        self.stats.charge(self.config.cost.write_ns(n));
        if end > SIM_DISK_LEN_MAX {
            return Err(too_large(end));
        }
        self.check_capacity(end)?;
        if self.rng.chance(self.config.faults.write_eio) {
            self.counts.write_eio += 1;
            self.fault("write_eio", offset, n);
            return Err(eio(&format!("write of {offset}..{end}")));
        }
        if n == 0 {
            // Like `pwrite` of nothing: no data, no growth.
            return Ok(());
        }
        let landing = self.misdirect_target(offset, n).unwrap_or(offset);
        if end > self.sectors.len() {
            self.sectors.grow(end);
        }
        let written = self.sectors.write(landing, buf);
        for s in &written {
            self.latent.remove(s);
        }
        if self.rng.chance(self.config.faults.latent) {
            let bad = written[usize::try_from(self.rng.below(written.len() as u64))
                .expect("an index into written")];
            self.latent.insert(bad);
            self.counts.latent_sectors += 1;
            self.fault("latent", bad * self.sectors.sector_size(), n);
        }
        self.write_calls.push(written);
        self.stats.bytes_written += n;
        assert!(
            self.sectors.len() >= end,
            "a write leaves the length covering it"
        );
        Ok(())
    }

    /// Where a misdirected write of `n` bytes meant for `offset` lands instead: same position in
    /// its sector, another sector, inside the length before the call. `None` when the write is not
    /// misdirected (by chance, or because no other place fits).
    fn misdirect_target(&mut self, offset: u64, n: u64) -> Option<u64> {
        if !self.rng.chance(self.config.faults.misdirect) {
            return None;
        }
        let ss = self.sectors.sector_size();
        let (meant, in_sector) = (offset / ss, offset % ss);
        let room = self.sectors.len().checked_sub(in_sector + n)?;
        let last_start = room / ss; // landing sectors 0..=last_start keep the data inside the length
        let others = last_start + 1 - u64::from(meant <= last_start);
        if others == 0 {
            return None;
        }
        let pick = self.rng.below(others);
        let sector = if meant <= last_start && pick >= meant {
            pick + 1
        } else {
            pick
        };
        assert_ne!(sector, meant);
        self.counts.misdirected_writes += 1;
        self.fault("misdirect", offset, n);
        Some(sector * ss + in_sector)
    }

    pub(super) fn sync(&mut self) -> io::Result<()> {
        self.stats.syncs += 1;
        if self.rng.chance(self.config.faults.sync_eio) {
            self.counts.sync_eio += 1;
            self.fault("sync_eio", 0, 0);
            for s in self.sectors.pending_keys() {
                if self.rng.coin() {
                    self.sectors.drop_pending(s);
                    self.counts.sectors_dropped_by_failed_sync += 1;
                }
            }
            self.stats.charge(self.config.cost.sync_ns(0));
            // `grew` stays: a retried sync with no write between still follows the growth.
            return Err(eio("fsync failed; some dirty sectors were dropped"));
        }
        let grew = std::mem::take(&mut self.grew);
        if self.config.faults.lying_sync {
            self.counts.lying_syncs += 1;
            self.fault("lying_sync", 0, 0);
            self.stats.charge(self.config.cost.sync_ns(0));
            return Ok(());
        }
        let durable_len = match self.config.length {
            LengthModel::OwnBarrier if !grew => {
                let s = &self.sectors;
                s.durable_len().min(s.len_low())
            }
            _ => self.sectors.len(),
        };
        let made_durable = self.sectors.sync(durable_len);
        self.write_calls.clear();
        let bytes = made_durable * self.sectors.sector_size();
        self.stats.charge(self.config.cost.sync_ns(bytes));
        if self.rng.chance(self.config.faults.bit_flip) {
            self.flip_a_bit();
        }
        Ok(())
    }

    /// Flip one seeded bit of one seeded durable sector, if any sector is durable.
    fn flip_a_bit(&mut self) {
        let durable = self.sectors.durable_keys();
        if durable.is_empty() {
            return;
        }
        let index = usize::try_from(self.rng.below(durable.len() as u64)).expect("an index");
        let s = durable[index];
        let bit = self.rng.below(self.sectors.durable_valid_bytes(s) * 8);
        self.sectors.flip_durable_bit(s, bit);
        self.counts.bit_flips += 1;
        self.fault("bit_flip", s * self.sectors.sector_size(), 1);
    }

    pub(super) fn set_len(&mut self, len: u64) -> io::Result<()> {
        self.stats.set_lens += 1;
        self.grew = false;
        if len > SIM_DISK_LEN_MAX {
            return Err(too_large(len));
        }
        self.check_capacity(len)?;
        self.grew = len > self.sectors.len();
        if len >= self.sectors.len() {
            self.sectors.grow(len);
        } else {
            self.sectors.truncate(len);
            let first_gone = self.sectors.sector_count(len);
            drop(self.latent.split_off(&first_gone));
        }
        Ok(())
    }
}
