//! One crash state seen whole, for a report a person reads (`crashlab check --html-dir`): the
//! operation running when the power went, the pending sectors and those the state keeps, the
//! images before and after, and the states the oracle allowed there.

use crate::book::Book;
use crate::image::build;
use crate::{crash_point, drive, state_image, CheckConfig};
use crashlab_models::KvModel;
use crashlab_sim::adapter::Engine;
use crashlab_sim::spec::CrashState;

/// A crash state of the recorded run, with its context.
#[derive(Clone, Debug)]
pub struct StateView {
    /// The workload operation running at the crash point.
    pub op: usize,
    /// Storage calls made before the cut (the crash point's name).
    pub call: u64,
    pub sector_size: u64,
    /// The effective pending sectors at the crash point (those that would change the image).
    pub pending: Vec<u64>,
    /// Of them, the sectors the state keeps (a power cut's); empty for other states.
    pub kept: Vec<u64>,
    /// What reads saw at the crash point (pending over durable).
    pub current_image: Vec<u8>,
    /// The durable image: what keeping nothing leaves.
    pub durable_image: Vec<u8>,
    /// The image the state leaves, when it is one image (not a reader's view).
    pub image: Option<Vec<u8>>,
    /// States a power cut may leave there, oldest first.
    pub allowed_power: Vec<KvModel>,
    /// States a process crash may leave there.
    pub allowed_process: Vec<KvModel>,
    /// Whether the engine promises anything across a power cut.
    pub promised: bool,
}

/// The view of `state` of `cfg`'s workload (not a live finding: that is no crash point).
pub fn state_view<E: Engine>(
    cfg: &CheckConfig<E::Config>,
    state: &CrashState,
) -> Result<StateView, String> {
    let image = crate::prebuild::<E>(cfg)?;
    let mut book = Book::default();
    let rec = drive::record::<E>(cfg, image.as_ref(), &mut book);
    let p = crash_point(&rec, state)?;
    let ss = cfg.params.sector_size as usize;
    let allowed = book.allowed(p.context.allowed);
    let models =
        |ids: &[usize]| -> Vec<KvModel> { ids.iter().map(|&i| book.model(i).clone()).collect() };
    let kept = match state {
        CrashState::PowerCut { keep, .. } => keep.clone(),
        _ => Vec::new(),
    };
    Ok(StateView {
        op: p.context.op,
        call: p.call,
        sector_size: ss as u64,
        pending: p.pending.iter().map(|s| s.index).collect(),
        kept,
        current_image: p.current.to_vec(),
        durable_image: build(&p.durable, std::iter::empty(), ss),
        image: state_image::<E>(cfg, state).ok(),
        allowed_power: models(&allowed.power),
        allowed_process: models(&allowed.process),
        promised: allowed.promised,
    })
}
