//! The checker's book of states: every database state the durability oracle names, and the sets
//! of states a crash point allows, each stored once and referred to by index.
//!
//! A crash point records the index of its allowed set rather than the oracle itself, so a
//! recovered image is judged against the promise in force when the power was cut, and the same
//! image met again at another crash point costs no second open.

use crashlab_models::{DurabilityOracle, KvModel};

/// Index of a state in the [`Book`].
pub(crate) type ModelId = usize;

/// What may be recovered after a crash at one point.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Allowed {
    /// States a power cut may leave (the last durable commit to the last attempted one).
    pub power: Vec<ModelId>,
    /// States a process crash may leave (the page cache survives: the last acknowledged commit
    /// to the last attempted one).
    pub process: Vec<ModelId>,
    /// Whether the engine promises anything across a power cut (false with `no_sync`: then only
    /// a panic is a violation after a power cut).
    pub promised: bool,
}

#[derive(Default)]
pub(crate) struct Book {
    models: Vec<KvModel>,
    allowed: Vec<Allowed>,
}

impl Book {
    /// The id of `m`, if it is a state the book knows.
    pub fn find(&self, m: &KvModel) -> Option<ModelId> {
        self.models.iter().position(|x| x == m)
    }

    /// The id of `m`, adding it if new.
    pub fn intern(&mut self, m: &KvModel) -> ModelId {
        self.find(m).unwrap_or_else(|| {
            self.models.push(m.clone());
            self.models.len() - 1
        })
    }

    pub fn model(&self, id: ModelId) -> &KvModel {
        &self.models[id]
    }

    /// The index of an allowed set, adding it if new.
    pub fn allow(&mut self, a: Allowed) -> usize {
        self.allowed
            .iter()
            .position(|x| *x == a)
            .unwrap_or_else(|| {
                self.allowed.push(a);
                self.allowed.len() - 1
            })
    }

    pub fn allowed(&self, index: usize) -> &Allowed {
        &self.allowed[index]
    }

    /// The allowed set the oracle describes now.
    pub fn allow_oracle(&mut self, o: &DurabilityOracle, promised: bool) -> usize {
        let mut ids = |(lo, hi): (usize, usize)| -> Vec<ModelId> {
            (lo..=hi).map(|i| self.intern(o.state(i))).collect()
        };
        let power = ids(o.allowed_after_power_cut());
        let process = ids(o.allowed_after_reopen());
        self.allow(Allowed {
            power,
            process,
            promised,
        })
    }
}
