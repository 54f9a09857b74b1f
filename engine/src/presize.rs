//! Pre-sized buffers: how a buffer that grows with the work is first sized, and what its growth
//! costs, counted deterministically.
//!
//! docs/DESIGN.md, "The three findings", item 3: IAVL over goleveldb found that computing the exact
//! batch size up front (an extra pass) cost more than it saved; pre-sizing pays only when the
//! size is known for free. [`PresizePolicy`] lets a workload measure that trade-off:
//!
//! - `Grow`: start at [`GROW_INITIAL_CAPACITY`] bytes and double whenever short.
//! - `Exact`: walk the items first to compute the exact size (one size-computation step per item
//!   examined), then allocate once; the buffer never grows.
//! - `Estimate`: allocate a size already known without a pass (the sum of the merged batches'
//!   lengths, the commit's page bytes counted as pages were encoded, the freelist's id count);
//!   double when that proves short.
//!
//! [`SizedBuf`] owns a `Vec<u8>` and decides every capacity itself: it reserves exactly what the
//! policy says (`Vec::with_capacity`, `Vec::reserve_exact`) and counts allocations,
//! re-allocations and bytes copied by growth from its own capacity figures, never from `Vec`'s
//! growth strategy. So the counts are a function of the sizes only.
//!
//! Invariants:
//! - `len() <= capacity()`, and the `Vec` holds at least `capacity()` bytes.
//! - `capacity()` changes only through [`SizedBuf::ensure`], which counts the change.

/// Bytes a `Grow` buffer starts with (and the least a growing buffer grows to).
pub const GROW_INITIAL_CAPACITY: usize = 64;

/// How a buffer that grows with the work is sized before it is filled.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum PresizePolicy {
    /// Start small and double when short.
    Grow,
    /// Compute the exact size with an extra pass, then allocate once.
    Exact,
    /// Allocate a size known for free; double when short. The default: it is what pays (the
    /// commit's page buffer is dirty pages × page size, known before a byte is copied).
    #[default]
    Estimate,
}

/// Work done by buffers, for the engine's counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BufferWork {
    /// Buffers allocated (a first allocation, whatever its size).
    pub allocations: u64,
    /// Growths of an already allocated buffer.
    pub reallocations: u64,
    /// Bytes a growth had to move from the old allocation to the new one.
    pub bytes_copied_by_growth: u64,
    /// Items examined by an `Exact` policy's sizing pass.
    pub size_computation_steps: u64,
    /// Bytes of every allocation the buffer made: the first and each growth's new size (the
    /// B/op a Go benchmark reports for a growing slice, where every growth allocates anew).
    pub bytes_reserved: u64,
}

impl BufferWork {
    pub fn add(&mut self, other: &BufferWork) {
        let BufferWork {
            allocations,
            reallocations,
            bytes_copied_by_growth,
            size_computation_steps,
            bytes_reserved,
        } = *other;
        self.allocations += allocations;
        self.reallocations += reallocations;
        self.bytes_copied_by_growth += bytes_copied_by_growth;
        self.size_computation_steps += size_computation_steps;
        self.bytes_reserved += bytes_reserved;
    }
}

/// A byte buffer that grows itself by doubling and counts what growth costs.
#[derive(Debug, Default)]
pub struct SizedBuf {
    bytes: Vec<u8>,
    /// The capacity this buffer asked for; `bytes.capacity()` may exceed it, never fall short.
    capacity: usize,
    work: BufferWork,
}

impl Clone for SizedBuf {
    /// A copy with the same capacity and accounting (a derived clone would trim the capacity).
    fn clone(&self) -> SizedBuf {
        let mut bytes = Vec::with_capacity(self.capacity);
        bytes.extend_from_slice(&self.bytes);
        SizedBuf {
            bytes,
            capacity: self.capacity,
            work: self.work,
        }
    }
}

impl SizedBuf {
    /// Adopt bytes allocated elsewhere: nothing is counted, the capacity is taken as their
    /// length (the `Vec` may hold more; growth starts from the length).
    pub fn adopt(bytes: Vec<u8>) -> SizedBuf {
        SizedBuf {
            capacity: bytes.len(),
            bytes,
            work: BufferWork::default(),
        }
    }

    /// An empty buffer of exactly `capacity` bytes (no allocation when 0).
    pub fn with_capacity(capacity: usize) -> SizedBuf {
        let mut buf = SizedBuf::default();
        buf.reserve_to(capacity);
        buf
    }

    /// An empty buffer sized by `policy`. `exact` runs the sizing pass and reports
    /// `(size, steps)`; it is called only under `Exact`. `estimate` is the size known for free.
    pub fn for_policy(
        policy: PresizePolicy,
        estimate: usize,
        exact: impl FnOnce() -> (usize, u64),
    ) -> SizedBuf {
        match policy {
            PresizePolicy::Grow => SizedBuf::with_capacity(GROW_INITIAL_CAPACITY),
            PresizePolicy::Estimate => SizedBuf::with_capacity(estimate),
            PresizePolicy::Exact => {
                let (size, steps) = exact();
                let mut buf = SizedBuf::with_capacity(size);
                buf.work.size_computation_steps += steps;
                buf
            }
        }
    }

    pub fn len(&self) -> usize {
        self.bytes.len()
    }

    /// The capacity asked for so far.
    #[cfg(test)]
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    pub fn as_slice(&self) -> &[u8] {
        &self.bytes
    }

    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        &mut self.bytes
    }

    pub fn work(&self) -> BufferWork {
        self.work
    }

    pub fn push(&mut self, byte: u8) {
        self.ensure(1);
        self.bytes.push(byte);
    }

    // Inlined: the freelist page appends one 8-byte id at a time, and a call (plus a `memcpy`
    // call for 8 bytes) per id was a tenth of a delete's instructions.
    #[inline]
    pub fn extend_from_slice(&mut self, bytes: &[u8]) {
        self.ensure(bytes.len());
        self.bytes.extend_from_slice(bytes);
    }

    /// Append zero bytes up to `len` (nothing if already that long).
    pub fn zero_fill_to(&mut self, len: usize) {
        let more = len.saturating_sub(self.len());
        self.ensure(more);
        self.bytes.resize(self.len() + more, 0);
    }

    /// Make room for `additional` more bytes: double the capacity (from `GROW_INITIAL_CAPACITY`
    /// if none yet) until they fit, in one growth, and count it.
    #[inline]
    pub fn ensure(&mut self, additional: usize) {
        let needed = self
            .len()
            .checked_add(additional)
            .expect("buffer size overflows usize");
        if needed > self.capacity {
            self.grow_to_fit(needed);
        }
    }

    /// The slow path of [`SizedBuf::ensure`], kept out of line.
    #[cold]
    fn grow_to_fit(&mut self, needed: usize) {
        let mut capacity = if self.capacity == 0 {
            GROW_INITIAL_CAPACITY
        } else {
            self.capacity
        };
        while capacity < needed {
            capacity = capacity
                .checked_mul(2)
                .expect("buffer size overflows usize");
        }
        self.reserve_to(capacity);
    }

    /// Set the capacity to `capacity` (not less than now) and count it.
    fn reserve_to(&mut self, capacity: usize) {
        assert!(capacity >= self.capacity, "a buffer never shrinks");
        if capacity == self.capacity {
            return;
        }
        if self.capacity == 0 {
            self.work.allocations += 1;
        } else {
            self.work.reallocations += 1;
            self.work.bytes_copied_by_growth += self.len() as u64;
        }
        self.work.bytes_reserved += capacity as u64;
        self.bytes.reserve_exact(capacity - self.len());
        self.capacity = capacity;
        debug_assert!(self.bytes.capacity() >= self.capacity);
    }
}

impl crashlab_format::page::ByteSink for SizedBuf {
    fn len(&self) -> usize {
        SizedBuf::len(self)
    }
    fn extend_from_slice(&mut self, bytes: &[u8]) {
        SizedBuf::extend_from_slice(self, bytes);
    }
    fn zero_fill_to(&mut self, len: usize) {
        SizedBuf::zero_fill_to(self, len);
    }
    fn tail_mut(&mut self, at: usize) -> &mut [u8] {
        &mut self.as_mut_slice()[at..]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fill(mut buf: SizedBuf, chunks: &[usize]) -> SizedBuf {
        for &n in chunks {
            buf.extend_from_slice(&vec![7u8; n]);
        }
        buf
    }

    #[test]
    fn grow_doubles_from_64() {
        // 4 + 100 + 100 = 204 bytes: 64 → 128 (copy 4) → 256 (copy 104).
        let buf = fill(
            SizedBuf::for_policy(PresizePolicy::Grow, 0, || unreachable!()),
            &[4, 100, 100],
        );
        assert_eq!(buf.len(), 204);
        assert_eq!(buf.capacity(), 256);
        let expected = BufferWork {
            allocations: 1,
            reallocations: 2,
            bytes_copied_by_growth: 4 + 104,
            size_computation_steps: 0,
            bytes_reserved: 64 + 128 + 256,
        };
        assert_eq!(buf.work(), expected);
    }

    #[test]
    fn exact_allocates_once_and_counts_its_pass() {
        let buf = SizedBuf::for_policy(PresizePolicy::Exact, 0, || (204, 3));
        let buf = fill(buf, &[4, 100, 100]);
        assert_eq!(buf.capacity(), 204);
        let expected = BufferWork {
            allocations: 1,
            size_computation_steps: 3,
            bytes_reserved: 204,
            ..BufferWork::default()
        };
        assert_eq!(buf.work(), expected);
    }

    #[test]
    fn estimate_falls_back_to_doubling_when_short() {
        // Estimate 150 for 204 bytes: 150 → 300 once, copying the 104 bytes already there.
        let buf = SizedBuf::for_policy(PresizePolicy::Estimate, 150, || unreachable!());
        let buf = fill(buf, &[4, 100, 100]);
        assert_eq!(buf.capacity(), 300);
        let expected = BufferWork {
            allocations: 1,
            reallocations: 1,
            bytes_copied_by_growth: 104,
            size_computation_steps: 0,
            bytes_reserved: 150 + 300,
        };
        assert_eq!(buf.work(), expected);
    }

    #[test]
    fn an_empty_start_allocates_at_first_use() {
        let mut buf = SizedBuf::with_capacity(0);
        assert_eq!(buf.work(), BufferWork::default());
        buf.push(1);
        assert_eq!(buf.capacity(), GROW_INITIAL_CAPACITY);
        assert_eq!(buf.work().allocations, 1);
        buf.zero_fill_to(65);
        assert_eq!(buf.as_slice().len(), 65);
        assert_eq!(buf.capacity(), 128);
        assert_eq!(buf.work().reallocations, 1);
        assert_eq!(buf.work().bytes_copied_by_growth, 1);
    }
}
