//! The worker: runs inputs one after another under the memory cap, and tells its parent what
//! it does on stdout, one line per event, so that when it dies the parent knows which input
//! killed it:
//!
//! ```text
//! draw <index>
//! begin <index>
//! end <Report as JSON>
//! ```
//!
//! The cap is the global allocator's limit (see the binary): before each input it is set to the
//! heap in use plus [`cap_for`] the input's real size, so an allocation past it fails, the
//! process aborts with "memory allocation of N bytes failed", and the parent records the input.

use crate::bases::BasePool;
use crate::image::FileImage;
use crate::outcome::Outcome;
use crate::pipeline::{self, RunConfig};
use crate::spec::{Draw, Spec};
use crate::storage::Control;
use serde::{Deserialize, Serialize};
use std::io::{self, Write};

/// The live heap an input may add: 64 MiB plus 64 times the bytes the file really holds.
pub fn cap_for(real_bytes: u64) -> usize {
    let bytes = (64u64 << 20).saturating_add(real_bytes.saturating_mul(64));
    usize::try_from(bytes).unwrap_or(usize::MAX)
}

/// The global allocator's view, implemented by the binary (the library has no allocator).
pub trait MemoryLimit {
    /// Heap bytes in use.
    fn allocated(&self) -> usize;
    /// Refuse allocations that would take the heap in use past `limit`.
    fn set_limit(&self, limit: usize);
}

/// One input's result, as the worker reports it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Report {
    pub index: u64,
    pub outcome: Outcome,
    /// The input, when it failed (the parent saves it).
    pub spec: Option<Spec>,
}

/// Where a worker's inputs come from.
pub enum Inputs {
    /// Indices `start, start + step, ...` below `end` (for ever without one).
    Drawn {
        draw: Draw,
        start: u64,
        step: u64,
        end: Option<u64>,
    },
    /// One saved input, reported as index `index`.
    Saved { spec: Box<Spec>, index: u64 },
}

/// Run `image` under the cap.
pub fn run_capped(
    image: FileImage,
    config: &RunConfig,
    control: Control,
    mem: &dyn MemoryLimit,
) -> Outcome {
    let cap = cap_for(image.real_bytes());
    mem.set_limit(mem.allocated().saturating_add(cap));
    let outcome = pipeline::run(image, config, control, cap.saturating_add(1 << 20));
    mem.set_limit(usize::MAX);
    outcome
}

/// Run one spec (drawn or saved) and count what its mutations and base were.
pub fn run_spec(spec: &Spec, image: FileImage, control: Control, mem: &dyn MemoryLimit) -> Outcome {
    let mut outcome = run_capped(image, &spec.config, control, mem);
    let counts = &mut outcome.counts;
    for e in &spec.edits {
        counts.bump(&format!("mutation:{}", e.kind.name()));
    }
    if spec.edits.is_empty() {
        counts.bump("unmutated");
    }
    match &spec.base {
        crate::bases::Base::Fixture { name } => counts.bump(&format!("base:{name}")),
        crate::bases::Base::Generated { .. } => counts.bump("base:generated"),
    }
    outcome
}

/// The worker's loop. Stops at the end of its inputs, or when the parent stops reading.
pub fn run(
    inputs: Inputs,
    pool: &mut BasePool,
    control: Control,
    mem: &dyn MemoryLimit,
    out: &mut dyn Write,
) -> io::Result<()> {
    crate::panics::install_hook();
    match inputs {
        Inputs::Saved { spec, index } => {
            let image = spec.image(pool).map_err(io::Error::other)?;
            report(out, index, &spec, image, control, mem)
        }
        Inputs::Drawn {
            draw,
            start,
            step,
            end,
        } => {
            let mut index = start;
            while end.is_none_or(|e| index < e) {
                // Announced before it is drawn: if drawing it kills the worker, the parent
                // still knows which input did.
                writeln!(out, "draw {index}")?;
                out.flush()?;
                let (spec, image) = draw.input(index, pool).map_err(io::Error::other)?;
                report(out, index, &spec, image, control, mem)?;
                index += step.max(1);
            }
            Ok(())
        }
    }
}

fn report(
    out: &mut dyn Write,
    index: u64,
    spec: &Spec,
    image: FileImage,
    control: Control,
    mem: &dyn MemoryLimit,
) -> io::Result<()> {
    writeln!(out, "begin {index}")?;
    out.flush()?;
    let outcome = run_spec(spec, image, control, mem);
    let spec = outcome.failure.is_some().then(|| spec.clone());
    let line = serde_json::to_string(&Report {
        index,
        outcome,
        spec,
    })
    .map_err(io::Error::other)?;
    writeln!(out, "end {line}")?;
    out.flush()
}
