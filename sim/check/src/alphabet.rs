//! The alphabet of bounded-exhaustive workloads (`crashlab check --all-workloads`): what one
//! transaction of an enumerated workload may hold, how it becomes operations, and the size of
//! the space.
//!
//! A workload is 1 to K transactions; each one is
//!
//! - **a reader or not** (R = 2, or 1 without readers): `begin-reader` before its first
//!   operation, held across it and the next transaction and ended (`end-reader 0`, the oldest
//!   reader) after that one — or at the session's end when there is none. A reader held across two
//!   commits is what a page freed by the first and reused by the second would break;
//! - **1 to M data operations** (M = `tx_ops`), each one of the A operations of the alphabet:
//!   for each of the two buckets B, `create B`, `delete-bucket B`, `put B k` for each of the two
//!   keys at each of the two value lengths, and `delete B k` for each key — 8 per bucket, A = 16.
//!   The buckets are `a` and `a/x` (nested) for an engine with nested buckets, `a` and `b`
//!   otherwise; the keys `k0` and `k1`; the values 16 bytes (inline in a leaf) or one byte more
//!   than the engine's page (an overflow page at every page size);
//! - **ended** by `commit` or `rollback` (E = 2, or 1 with commits only).
//!
//! So one transaction has T = R · E · (A + A² + … + A^M) raw choices and the raw space of depth K
//! holds T + T² + … + T^K workloads ([`Alphabet::raw_workloads`]): 1,088 at K = 1 and 1,184,832
//! at K = 2 for the standard alphabet (M = 2).
//!
//! Invariants: names within one bucket's namespace are ordered by kind — every key sorts before
//! every sub-bucket name, and the checker's probe bucket after every top-level bucket — so a
//! renaming within one kind keeps every name's place ([`crate::canonical`] relies on it). A put's
//! version is a function of its place (transaction, position), so equal committed content writes
//! equal bytes whatever was rolled back before it.

use crate::drive::PROBE_BUCKET;
use crashlab_sim::adapter::Capabilities;
use crashlab_sim::op::{Name, Op, Path};

/// Most data operations in one transaction (`--tx-ops`): A^3 = 4,096 sequences per transaction.
pub const TX_OPS_MAX: usize = 3;

/// The bytes of an inline value: a bucket holding two of them stays inline at every page size.
pub const INLINE_LEN: u32 = 16;

/// Index of a bucket in [`Alphabet::buckets`].
pub type BucketIx = u8;
/// Index of a key in [`Alphabet::keys`].
pub type KeyIx = u8;

/// One data operation of the alphabet, by indices.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Act {
    Create(BucketIx),
    DeleteBucket(BucketIx),
    /// `len`: index into [`Alphabet::lens`].
    Put {
        bucket: BucketIx,
        key: KeyIx,
        len: u8,
    },
    Delete {
        bucket: BucketIx,
        key: KeyIx,
    },
}

impl Act {
    pub fn bucket(self) -> BucketIx {
        match self {
            Act::Create(b) | Act::DeleteBucket(b) => b,
            Act::Put { bucket, .. } | Act::Delete { bucket, .. } => bucket,
        }
    }

    pub fn key(self) -> Option<KeyIx> {
        match self {
            Act::Put { key, .. } | Act::Delete { key, .. } => Some(key),
            Act::Create(_) | Act::DeleteBucket(_) => None,
        }
    }
}

/// One enumerated transaction.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Tx {
    /// A reader opened before it, held across it and the next transaction.
    pub reader: bool,
    pub acts: Vec<Act>,
    pub commit: bool,
}

/// An enumerated workload: 1 to K transactions.
pub type Workload = Vec<Tx>;

/// What an enumerated transaction may hold.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Alphabet {
    /// Bucket paths, a parent before its children: two, nested or flat.
    pub buckets: Vec<Path>,
    pub keys: Vec<Name>,
    /// Value lengths: inline, then overflow.
    pub lens: Vec<u32>,
    /// Most data operations in one transaction (M), 1 to [`TX_OPS_MAX`].
    pub tx_ops: usize,
    /// Transactions may end by rollback as well as by commit.
    pub rollbacks: bool,
    /// A transaction may run under a reader.
    pub readers: bool,
}

impl Alphabet {
    /// The standard alphabet for an engine that can do `caps`: two buckets (`a` and `a/x` when it
    /// nests buckets, `a` and `b` otherwise), two keys, inline and overflow values, one or two
    /// operations per transaction, commit or rollback, a reader or not.
    pub fn standard(caps: &Capabilities) -> Alphabet {
        let buckets = if caps.nested_buckets {
            vec![path(&["a"]), path(&["a", "x"])]
        } else {
            vec![path(&["a"]), path(&["b"])]
        };
        Alphabet {
            buckets,
            keys: vec![Name::new("k0"), Name::new("k1")],
            lens: vec![INLINE_LEN, caps.page_size + 1],
            tx_ops: 2,
            rollbacks: true,
            readers: true,
        }
    }

    /// Whether the alphabet is one the enumeration and the canonical form can work with: at
    /// most two buckets (a second one nested in the first or beside it), one or two keys, names
    /// ordered by kind (see the module's invariants), and a valid `tx_ops`.
    pub fn validate(&self) -> Result<(), String> {
        let bad = |why: &str| Err(format!("unsupported workload alphabet: {why}"));
        if self.buckets.is_empty() || self.buckets.len() > 2 {
            return bad("one or two buckets");
        }
        if self.buckets[0].len() != 1 {
            return bad("the first bucket is top-level");
        }
        if let Some(second) = self.buckets.get(1) {
            let nested = second.len() == 2 && second[0] == self.buckets[0][0];
            let beside = second.len() == 1 && second[0] > self.buckets[0][0];
            if !nested && !beside {
                return bad("the second bucket is inside the first or sorts after it");
            }
            let last = &second[second.len() - 1];
            if nested && self.keys.iter().any(|k| k >= last) {
                return bad("every key sorts before the nested bucket's name");
            }
        }
        if self
            .buckets
            .iter()
            .any(|p| p[0].0.as_slice() >= PROBE_BUCKET)
        {
            return bad("every top-level bucket sorts before the checker's probe bucket");
        }
        if self.keys.is_empty() || self.keys.len() > 2 || !self.keys.is_sorted() {
            return bad("one or two keys, in order");
        }
        if self.lens.is_empty() || self.lens.len() > 2 {
            return bad("one or two value lengths");
        }
        if self.tx_ops == 0 || self.tx_ops > TX_OPS_MAX {
            return bad("1 to TX_OPS_MAX data operations per transaction");
        }
        Ok(())
    }

    /// Whether the second bucket is nested in the first.
    pub fn nested(&self) -> bool {
        self.buckets.get(1).is_some_and(|p| p.len() == 2)
    }

    /// Every data operation (A of them), in a fixed order.
    pub fn acts(&self) -> Vec<Act> {
        let mut all = Vec::new();
        for b in 0..self.buckets.len() as u8 {
            all.push(Act::Create(b));
            all.push(Act::DeleteBucket(b));
            for key in 0..self.keys.len() as u8 {
                for len in 0..self.lens.len() as u8 {
                    all.push(Act::Put {
                        bucket: b,
                        key,
                        len,
                    });
                }
                all.push(Act::Delete { bucket: b, key });
            }
        }
        all
    }

    /// Reader choices per transaction (R).
    pub fn reader_choices(&self) -> &'static [bool] {
        if self.readers {
            &[false, true]
        } else {
            &[false]
        }
    }

    /// Endings per transaction (E): `true` is commit.
    pub fn endings(&self) -> &'static [bool] {
        if self.rollbacks {
            &[true, false]
        } else {
            &[true]
        }
    }

    /// Raw choices for one transaction: T = R · E · (A + A² + … + A^M).
    pub fn raw_per_tx(&self) -> u128 {
        let a = self.acts().len() as u128;
        let sequences: u128 = (1..=self.tx_ops as u32).map(|m| a.pow(m)).sum();
        self.reader_choices().len() as u128 * self.endings().len() as u128 * sequences
    }

    /// Raw workloads of 1 to `depth` transactions: T + T² + … + T^K (`None` past `u128`).
    pub fn raw_workloads(&self, depth: usize) -> Option<u128> {
        let t = self.raw_per_tx();
        (1..=depth as u32).try_fold(0u128, |sum, k| sum.checked_add(t.checked_pow(k)?))
    }

    /// The version of the put at `position` of transaction `tx` (1-based, unique per place).
    pub fn version(&self, tx: usize, position: usize) -> u32 {
        u32::try_from(1 + tx * self.tx_ops + position).expect("a workload's places fit u32")
    }

    /// The operation `act` at `position` of transaction `tx`.
    pub fn op(&self, act: Act, tx: usize, position: usize) -> Op {
        let path = |b: BucketIx| self.buckets[b as usize].clone();
        match act {
            Act::Create(b) => Op::CreateBucket(path(b)),
            Act::DeleteBucket(b) => Op::DeleteBucket(path(b)),
            Act::Put { bucket, key, len } => Op::Put {
                path: path(bucket),
                key: self.keys[key as usize].clone(),
                len: self.lens[len as usize],
                version: self.version(tx, position),
            },
            Act::Delete { bucket, key } => Op::Delete {
                path: path(bucket),
                key: self.keys[key as usize].clone(),
            },
        }
    }

    /// The workload as the checker's operations.
    pub fn ops(&self, w: &[Tx]) -> Vec<Op> {
        let mut ops = Vec::new();
        for (i, tx) in w.iter().enumerate() {
            if tx.reader {
                ops.push(Op::BeginReader);
            }
            for (j, &act) in tx.acts.iter().enumerate() {
                ops.push(self.op(act, i, j));
            }
            ops.push(if tx.commit { Op::Commit } else { Op::Rollback });
            if i > 0 && w[i - 1].reader {
                // The previous transaction's reader, the oldest one open.
                ops.push(Op::EndReader(0));
            }
        }
        ops
    }
}

fn path(names: &[&str]) -> Path {
    names.iter().map(|n| Name::new(*n)).collect()
}

/// A workload in one line: transactions separated by ` | `, a reader shown as `r:`.
pub fn describe(alphabet: &Alphabet, w: &[Tx]) -> String {
    let txs: Vec<String> = w
        .iter()
        .enumerate()
        .map(|(i, tx)| {
            let ops: Vec<String> = tx
                .acts
                .iter()
                .enumerate()
                .map(|(j, &a)| alphabet.op(a, i, j).to_string())
                .collect();
            format!(
                "{}{}; {}",
                if tx.reader { "r: " } else { "" },
                ops.join("; "),
                if tx.commit { "commit" } else { "rollback" }
            )
        })
        .collect();
    txs.join(" | ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn crashlab_caps() -> Capabilities {
        Capabilities {
            nested_buckets: true,
            page_size: 512,
            directory: false,
            ..Capabilities::default()
        }
    }

    #[test]
    fn the_standard_alphabet_has_sixteen_operations_and_its_formula() {
        for caps in [crashlab_caps(), Capabilities::default()] {
            let a = Alphabet::standard(&caps);
            a.validate().unwrap();
            assert_eq!(a.acts().len(), 16);
            // T = 2 readers · 2 endings · (16 + 16²).
            assert_eq!(a.raw_per_tx(), 2 * 2 * (16 + 256));
            assert_eq!(a.raw_workloads(1), Some(1088));
            assert_eq!(a.raw_workloads(2), Some(1088 + 1088 * 1088));
            assert_eq!(a.lens, vec![16, caps.page_size + 1]);
        }
        assert!(Alphabet::standard(&crashlab_caps()).nested());
        assert!(!Alphabet::standard(&Capabilities::default()).nested());
    }

    #[test]
    fn a_workload_becomes_operations_with_readers_held_across_two_transactions() {
        let a = Alphabet::standard(&crashlab_caps());
        let put = Act::Put {
            bucket: 0,
            key: 1,
            len: 1,
        };
        let w = vec![
            Tx {
                reader: true,
                acts: vec![Act::Create(0), put],
                commit: true,
            },
            Tx {
                reader: false,
                acts: vec![Act::Delete { bucket: 0, key: 1 }],
                commit: false,
            },
            Tx {
                reader: false,
                acts: vec![Act::Create(1)],
                commit: true,
            },
        ];
        let text: Vec<String> = a.ops(&w).iter().map(Op::to_string).collect();
        assert_eq!(
            text,
            [
                "begin-reader",
                "create a",
                "put a k1 len=513 v=2",
                "commit",
                "delete a k1",
                "rollback",
                "end-reader 0",
                "create a/x",
                "commit",
            ]
        );
        assert_eq!(
            describe(&a, &w[..1]),
            "r: create a; put a k1 len=513 v=2; commit"
        );
    }

    #[test]
    fn alphabets_the_canonical_form_cannot_rename_are_refused() {
        let mut a = Alphabet::standard(&crashlab_caps());
        a.keys = vec![Name::new("z0"), Name::new("z1")];
        assert!(a.validate().unwrap_err().contains("before the nested"));
        let mut a = Alphabet::standard(&Capabilities::default());
        a.buckets.reverse();
        assert!(a.validate().is_err());
        let mut a = Alphabet::standard(&Capabilities::default());
        a.tx_ops = TX_OPS_MAX + 1;
        assert!(a.validate().is_err());
    }
}
