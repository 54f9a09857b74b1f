//! The cost model: simulated time for each I/O, so throughput comparisons are deterministic and
//! independent of the machine that runs them.
//!
//! A call costs its latency plus the time to move its bytes at the model's bandwidth, rounded up
//! to a whole nanosecond. Sums saturate instead of wrapping; a run long enough to saturate a
//! `u64` of nanoseconds (584 years) is not a run.

/// Nanoseconds in one second: the unit conversion between `bandwidth_bytes_per_s` and `*_ns`.
const NS_PER_S: u128 = 1_000_000_000;

/// Simulated cost of each kind of I/O call.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct CostModel {
    /// Fixed cost of one `read_at` call.
    pub read_latency_ns: u64,
    /// Fixed cost of one `write_at` call (into the page cache).
    pub write_latency_ns: u64,
    /// Fixed cost of one `sync` call, on top of moving the bytes it makes durable.
    pub sync_latency_ns: u64,
    /// Transfer rate for every byte read, written or made durable. 0 means "free transfers"
    /// (latency only).
    pub bandwidth_bytes_per_s: u64,
}

impl Default for CostModel {
    /// An NVMe-class device as seen from these VMs: `fdatasync` was measured at 80–90 µs
    /// (DESIGN, bbolt numbers), so sync latency is 100 µs; reads and writes 10 µs each;
    /// 1 GB/s of transfer.
    fn default() -> Self {
        CostModel {
            read_latency_ns: 10_000,
            write_latency_ns: 10_000,
            sync_latency_ns: 100_000,
            bandwidth_bytes_per_s: 1_000_000_000,
        }
    }
}

impl CostModel {
    /// Simulated time of a read of `bytes` bytes.
    pub fn read_ns(&self, bytes: u64) -> u64 {
        self.read_latency_ns.saturating_add(self.transfer_ns(bytes))
    }

    /// Simulated time of a write of `bytes` bytes.
    pub fn write_ns(&self, bytes: u64) -> u64 {
        self.write_latency_ns
            .saturating_add(self.transfer_ns(bytes))
    }

    /// Simulated time of a sync that makes `bytes_pending` bytes durable.
    pub fn sync_ns(&self, bytes_pending: u64) -> u64 {
        self.sync_latency_ns
            .saturating_add(self.transfer_ns(bytes_pending))
    }

    /// Time to move `bytes` at the model's bandwidth, rounded up; 0 when bandwidth is 0.
    pub fn transfer_ns(&self, bytes: u64) -> u64 {
        if self.bandwidth_bytes_per_s == 0 {
            return 0;
        }
        let ns = (u128::from(bytes) * NS_PER_S).div_ceil(u128::from(self.bandwidth_bytes_per_s));
        u64::try_from(ns).unwrap_or(u64::MAX)
    }
}

/// What the disk was asked to do, and the simulated time it took. Every call counts, failed or
/// not; `bytes_read` and `bytes_written` count only the bytes of calls that succeeded.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct IoStats {
    pub reads: u64,
    pub writes: u64,
    pub syncs: u64,
    pub set_lens: u64,
    pub bytes_read: u64,
    pub bytes_written: u64,
    /// Sum of the cost of every call, in call order (see [`CostModel`]).
    pub sim_time_ns: u64,
}

impl IoStats {
    /// Add `other`'s figures to these (another disk's, e.g. the files of one SimFs);
    /// destructured, so a new field cannot be forgotten.
    pub fn accumulate(&mut self, other: &IoStats) {
        let IoStats {
            reads,
            writes,
            syncs,
            set_lens,
            bytes_read,
            bytes_written,
            sim_time_ns,
        } = *other;
        self.reads += reads;
        self.writes += writes;
        self.syncs += syncs;
        self.set_lens += set_lens;
        self.bytes_read += bytes_read;
        self.bytes_written += bytes_written;
        self.sim_time_ns = self.sim_time_ns.saturating_add(sim_time_ns);
    }

    /// The work done since `earlier`, a snapshot of the same disk's stats.
    pub fn since(&self, earlier: &IoStats) -> IoStats {
        let IoStats {
            reads,
            writes,
            syncs,
            set_lens,
            bytes_read,
            bytes_written,
            sim_time_ns,
        } = *earlier;
        IoStats {
            reads: self.reads - reads,
            writes: self.writes - writes,
            syncs: self.syncs - syncs,
            set_lens: self.set_lens - set_lens,
            bytes_read: self.bytes_read - bytes_read,
            bytes_written: self.bytes_written - bytes_written,
            sim_time_ns: self.sim_time_ns - sim_time_ns,
        }
    }

    /// Add `ns` of simulated time.
    pub(crate) fn charge(&mut self, ns: u64) {
        self.sim_time_ns = self.sim_time_ns.saturating_add(ns);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_costs_are_latency_plus_transfer() {
        let c = CostModel::default();
        // 4096 B at 1 GB/s is 4096 ns.
        assert_eq!(c.read_ns(4096), 10_000 + 4_096);
        assert_eq!(c.write_ns(4096), 10_000 + 4_096);
        assert_eq!(c.sync_ns(0), 100_000);
        assert_eq!(c.sync_ns(1_000_000), 100_000 + 1_000_000);
        assert_eq!(c.read_ns(0), 10_000);
    }

    #[test]
    fn transfer_rounds_up_and_saturates() {
        let c = CostModel {
            read_latency_ns: 1,
            write_latency_ns: 2,
            sync_latency_ns: 3,
            bandwidth_bytes_per_s: 3_000_000_000,
        };
        // 1 byte at 3 GB/s is 1/3 ns: rounds up to 1.
        assert_eq!(c.transfer_ns(1), 1);
        assert_eq!(c.transfer_ns(3), 1);
        assert_eq!(c.transfer_ns(4), 2);
        assert_eq!(c.write_ns(4), 4);
        let slow = CostModel {
            bandwidth_bytes_per_s: 1,
            ..c
        };
        assert_eq!(slow.transfer_ns(u64::MAX), u64::MAX);
        assert_eq!(slow.sync_ns(u64::MAX), u64::MAX);
        let free = CostModel {
            bandwidth_bytes_per_s: 0,
            ..c
        };
        assert_eq!(free.read_ns(1 << 30), 1);
    }

    #[test]
    fn charge_saturates() {
        let mut s = IoStats::default();
        s.charge(u64::MAX - 1);
        s.charge(5);
        assert_eq!(s.sim_time_ns, u64::MAX);
    }
}
