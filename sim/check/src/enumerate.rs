//! Every workload of the alphabet up to a depth, visited once per canonical class.
//!
//! The walk is depth-first over transactions, with the model alongside: an operation the model
//! refuses in the state it would run in (a put into a missing bucket, creating a bucket that
//! exists, deleting one that does not) ends that branch, as CrashMonkey's ACE only generates
//! workloads whose dependencies hold. Refusals change nothing and are the seeded generators'
//! daily bread; what is rare there, and what this walk exists for, is every short *effective*
//! sequence. The branches cut are counted in closed form, so `raw = valid + refused` holds
//! exactly and the raw count is the formula's ([`Alphabet::raw_workloads`]). A valid workload
//! that is not canonical ([`crate::canonical`]) is counted as a duplicate and not visited.
//!
//! Order: transactions in order, each by reader choice, then length, then operations in the
//! alphabet's order, then ending; a workload is visited before its extensions. Deterministic.

use crate::alphabet::{Act, Alphabet, Tx, Workload};
use crate::canonical::is_canonical;
use crashlab_models::KvModel;
use crashlab_sim::apply::model_apply;

/// Deepest `--depth`: the raw space grows as T^K and the bound below refuses what would never
/// finish long before this.
pub const DEPTH_MAX: usize = 8;

/// Largest raw space (T + … + T^K) the enumeration accepts, 2^40: the walk visits every valid
/// workload of it, and past this a run would not end in a day.
pub const RAW_WORKLOADS_MAX: u128 = 1 << 40;

/// The space to enumerate: every workload of 1 to `depth` transactions over `alphabet`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Space {
    pub alphabet: Alphabet,
    pub depth: usize,
}

impl Space {
    /// Why this space cannot be enumerated, if it cannot.
    pub fn validate(&self) -> Result<(), String> {
        self.alphabet.validate()?;
        if self.depth == 0 || self.depth > DEPTH_MAX {
            return Err(format!(
                "depth {}: 1 to {DEPTH_MAX} transactions (DEPTH_MAX)",
                self.depth
            ));
        }
        match self.alphabet.raw_workloads(self.depth) {
            Some(n) if n <= RAW_WORKLOADS_MAX => Ok(()),
            n => Err(format!(
                "depth {} with {} operations per transaction is a raw space of {} workloads, \
                 more than the limit of 2^40 (RAW_WORKLOADS_MAX): lower --depth or --tx-ops",
                self.depth,
                self.alphabet.tx_ops,
                n.map_or("more than 2^128".into(), |n| n.to_string())
            )),
        }
    }
}

/// How the raw space divides.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    /// Every workload of the alphabet up to the depth: the formula.
    pub raw: u128,
    /// Raw workloads with an operation the model refuses where it runs.
    pub refused: u128,
    /// Workloads whose every operation the model accepts.
    pub valid: u64,
    /// Valid workloads that are an in-order renaming of a canonical one.
    pub duplicates: u64,
    /// Canonical valid workloads: the ones visited.
    pub distinct: u64,
    /// The visitor stopped the walk early (the counts cover what was walked).
    pub stopped: bool,
}

/// Walk `space`, calling `visit` with each canonical valid workload until it returns false.
pub fn enumerate(space: &Space, visit: &mut dyn FnMut(&[Tx]) -> bool) -> Counts {
    space.validate().expect("a validated space");
    let alphabet = &space.alphabet;
    let t = alphabet.raw_per_tx();
    let a = alphabet.acts().len() as u128;
    let mut walk = Walk {
        alphabet,
        depth: space.depth,
        acts: alphabet.acts(),
        // tail[n] = 1 + T + … + T^n: the raw workloads that extend a fixed prefix by 0 to n
        // transactions.
        tail: (0..=space.depth as u32)
            .scan(0u128, |sum, n| {
                *sum += t.pow(n);
                Some(*sum)
            })
            .collect(),
        a_pow: (0..=alphabet.tx_ops as u32).map(|m| a.pow(m)).collect(),
        w: Vec::new(),
        counts: Counts::default(),
        visit,
    };
    walk.level(&KvModel::new());
    let mut counts = walk.counts;
    counts.raw = alphabet
        .raw_workloads(space.depth)
        .expect("validated: the raw space fits");
    if !counts.stopped {
        assert_eq!(
            counts.valid as u128 + counts.refused,
            counts.raw,
            "the walk accounts for every raw workload"
        );
        assert_eq!(counts.duplicates + counts.distinct, counts.valid);
    }
    counts
}

struct Walk<'a, 'v> {
    alphabet: &'a Alphabet,
    depth: usize,
    acts: Vec<Act>,
    tail: Vec<u128>,
    a_pow: Vec<u128>,
    w: Workload,
    counts: Counts,
    visit: &'v mut dyn FnMut(&[Tx]) -> bool,
}

impl Walk<'_, '_> {
    /// Every next transaction after `self.w`, from the committed state `model`.
    fn level(&mut self, model: &KvModel) {
        for &reader in self.alphabet.reader_choices() {
            for m in 1..=self.alphabet.tx_ops {
                self.sequence(model, reader, m, &mut Vec::new(), model);
                if self.counts.stopped {
                    return;
                }
            }
        }
    }

    /// Every way to complete a transaction of `m` operations that began from `before` and
    /// holds `acts` so far, leaving `current`.
    fn sequence(
        &mut self,
        before: &KvModel,
        reader: bool,
        m: usize,
        acts: &mut Vec<Act>,
        current: &KvModel,
    ) {
        if acts.len() == m {
            return self.end(before, reader, acts, current);
        }
        let (tx, position) = (self.w.len(), acts.len());
        for i in 0..self.acts.len() {
            let act = self.acts[i];
            let mut next = current.clone();
            if model_apply(&mut next, &self.alphabet.op(act, tx, position)).is_err() {
                self.counts.refused += self.refused_extensions(m - 1 - position);
                continue;
            }
            acts.push(act);
            self.sequence(before, reader, m, acts, &next);
            acts.pop();
            if self.counts.stopped {
                return;
            }
        }
    }

    /// Raw workloads cut by one refusal: the rest of its transaction (`left` operations, an
    /// ending) and 0 to depth − (its number) transactions after it.
    fn refused_extensions(&self, left: usize) -> u128 {
        let endings = self.alphabet.endings().len() as u128;
        self.a_pow[left] * endings * self.tail[self.depth - (self.w.len() + 1)]
    }

    /// The transaction ends by each ending: a workload, then its extensions.
    fn end(&mut self, before: &KvModel, reader: bool, acts: &[Act], current: &KvModel) {
        for &commit in self.alphabet.endings() {
            self.w.push(Tx {
                reader,
                acts: acts.to_vec(),
                commit,
            });
            self.counts.valid += 1;
            if !is_canonical(self.alphabet, &self.w) {
                self.counts.duplicates += 1;
            } else {
                self.counts.distinct += 1;
                self.counts.stopped = !(self.visit)(&self.w);
            }
            if !self.counts.stopped && self.w.len() < self.depth {
                self.level(if commit { current } else { before });
            }
            self.w.pop();
            if self.counts.stopped {
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::canonical::canonical;
    use crashlab_sim::adapter::Capabilities;
    use std::collections::BTreeMap;

    fn nested() -> Alphabet {
        Alphabet::standard(&Capabilities {
            nested_buckets: true,
            page_size: 512,
            directory: false,
            ..Capabilities::default()
        })
    }

    fn flat() -> Alphabet {
        Alphabet::standard(&Capabilities::default())
    }

    fn all(alphabet: Alphabet, depth: usize) -> (Counts, Vec<Workload>) {
        let mut seen = Vec::new();
        let counts = enumerate(&Space { alphabet, depth }, &mut |w| {
            seen.push(w.to_vec());
            true
        });
        (counts, seen)
    }

    /// Counted by hand. Nested (`a`, `a/x`), from the empty database: one operation — only
    /// `create a` is accepted; two — `create a` then one of the 8 the state {a} accepts
    /// (`create a/x`, `delete-bucket a`, 4 puts into a, 2 deletes from a: deleting a missing key
    /// is no refusal). 9 sequences × 2 readers × 2 endings = 36 valid. Canonical: the 3 using
    /// `k1` alone in a (2 puts, 1 delete) are renamings of their `k0` twins: 6 × 4 = 24.
    /// Flat (`a`, `b`): `create a`, `create b`, and each followed by its 8: 18 × 4 = 72 valid;
    /// canonical: `create a` alone; after it, `create b`, `delete-bucket a`, the 2 puts and the
    /// delete of k0; and `create b; create a` (both used): 7 × 4 = 28.
    #[test]
    fn depth_one_gives_the_counts_worked_out_by_hand() {
        let (c, seen) = all(nested(), 1);
        assert_eq!((c.raw, c.valid, c.distinct), (1088, 36, 24));
        assert_eq!(c.refused, 1088 - 36);
        assert_eq!(seen.len(), 24);
        let (c, seen) = all(flat(), 1);
        assert_eq!((c.raw, c.valid, c.distinct), (1088, 72, 28));
        assert_eq!(seen.len(), 28);
    }

    #[test]
    fn every_valid_workload_has_exactly_one_canonical_twin_that_is_visited() {
        let mut alphabet = flat();
        alphabet.tx_ops = 1;
        let depth = 3;
        let (c, seen) = all(alphabet.clone(), depth);
        assert!(!c.stopped);
        let visited: BTreeMap<Workload, ()> = seen.iter().map(|w| (w.clone(), ())).collect();
        assert_eq!(visited.len(), seen.len(), "each canonical workload once");
        // Walk again without the canonical filter: every valid workload maps into the visited
        // set, and the class sizes add up.
        let mut valid = 0u64;
        let mut classes: BTreeMap<Workload, u64> = BTreeMap::new();
        walk_valid(
            &alphabet,
            depth,
            &mut Vec::new(),
            &KvModel::new(),
            &mut |w| {
                valid += 1;
                let c = canonical(&alphabet, w);
                assert!(visited.contains_key(&c), "{w:?} → {c:?}");
                assert_eq!(canonical(&alphabet, &c), c, "idempotent");
                *classes.entry(c).or_default() += 1;
            },
        );
        assert_eq!(valid, c.valid);
        assert_eq!(classes.len() as u64, c.distinct);
        assert_eq!(classes.values().sum::<u64>(), c.valid);
        assert!(classes.values().any(|&n| n > 1), "some renaming merged");
    }

    /// A plain, independent walk of every valid workload (no closed forms, no canonical form).
    fn walk_valid(
        alphabet: &Alphabet,
        depth: usize,
        w: &mut Workload,
        model: &KvModel,
        f: &mut dyn FnMut(&[Tx]),
    ) {
        if w.len() == depth {
            return;
        }
        for &reader in alphabet.reader_choices() {
            for &act in &alphabet.acts() {
                let mut next = model.clone();
                if model_apply(&mut next, &alphabet.op(act, w.len(), 0)).is_err() {
                    continue;
                }
                for &commit in alphabet.endings() {
                    w.push(Tx {
                        reader,
                        acts: vec![act],
                        commit,
                    });
                    f(w);
                    walk_valid(alphabet, depth, w, if commit { &next } else { model }, f);
                    w.pop();
                }
            }
        }
    }

    #[test]
    fn the_visitor_can_stop_the_walk() {
        let mut n = 0;
        let c = enumerate(
            &Space {
                alphabet: nested(),
                depth: 2,
            },
            &mut |_| {
                n += 1;
                n < 5
            },
        );
        assert!(c.stopped);
        assert_eq!(c.distinct, 5);
    }

    #[test]
    fn spaces_too_large_or_empty_are_refused_with_the_limit() {
        let big = Space {
            alphabet: nested(),
            depth: 4,
        };
        assert!(big.validate().unwrap_err().contains("RAW_WORKLOADS_MAX"));
        let none = Space {
            alphabet: nested(),
            depth: 0,
        };
        assert!(none.validate().unwrap_err().contains("DEPTH_MAX"));
    }
}
