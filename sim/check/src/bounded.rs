//! Bounded-exhaustive workloads (`crashlab check --all-workloads --depth K`): every canonical
//! workload of the alphabet ([`crate::enumerate`]) × every variant of the engine's options ×
//! every crash state of each.
//!
//! Each workload is a check of its own — recorded once by the session driver (every answer
//! compared with the model, the last reopen judged), then every crash point enumerated — with
//! two things shared between the workloads of one variant, both exact:
//!
//! - **the recoveries**, by image identity, with the book of states they name: an image met in
//!   another workload is judged from its recovery instead of being opened again (the verdict
//!   depends on the image, the engine's options and the allowed set, not on the workload).
//!   A recovery to a state no commit of the book produced is dropped after its workload, since a
//!   later workload may add that state to the book;
//! - **the crash points**: a point whose durable image, pending sectors, page cache, allowed set
//!   and open readers all equal those of a point already enumerated gives the same states and the
//!   same verdicts, so it is counted and not enumerated again. Workloads sharing a prefix share
//!   most of their points. A point the checker would sample is always enumerated (its sample
//!   depends on its place in the run).
//!
//! A violation is reported once, with the first workload that reached it, and saved as that
//! workload's case: `crashlab repro` replays it alone.

use crate::alphabet::describe;
use crate::book::{Book, ModelId};
use crate::enumerate::{enumerate, Counts, Space};
use crate::explore::{Cache, Explorer};
use crate::image::ImageId;
use crate::record::CrashPoint;
use crate::recover::Recovery;
use crate::report::{CoverageCounts, Found};
use crate::states::{self, Coverage};
use crate::{drive, CheckConfig};
use crashlab_sim::adapter::{Engine, EngineConfig};
use std::collections::BTreeSet;
use std::sync::Arc;

/// What a run tells its caller as it goes.
pub enum Progress<'a> {
    /// The space was walked: how it divides, and how many variants will check it.
    Enumerated { counts: &'a Counts, variants: usize },
    /// A variant finished.
    Variant(&'a VariantRow),
}

/// One variant's part of the run.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct VariantRow {
    /// The engine's options (`options = ...` of a case file) and whether commits are batched.
    pub options: String,
    pub batched: bool,
    /// Workloads checked.
    pub workloads: u64,
    pub commits: u64,
    /// Crash points of every workload.
    pub crash_points: u64,
    /// Distinct crash points: the ones enumerated (the others equal one of them).
    pub points_enumerated: u64,
    /// How the enumerated points were covered.
    pub coverage: CoverageCounts,
    /// States generated at the enumerated points.
    pub states: u64,
    /// Distinct images opened.
    pub distinct_images: u64,
    pub violating_states: u64,
    pub violating_workloads: u64,
}

/// A reported violation and the check that replays it.
#[derive(Clone, Debug)]
pub struct Finding<C> {
    /// The workload's check (its operations, the variant's options and parameters).
    pub cfg: CheckConfig<C>,
    /// The workload in one line.
    pub workload: String,
    pub found: Found,
}

/// What `check --all-workloads` found.
#[derive(Clone, Debug)]
pub struct BoundedReport<C> {
    pub space: Space,
    pub counts: Counts,
    /// Variants of the engine's options to check; `variants` holds those checked (fewer when a
    /// violation stopped the run).
    pub planned_variants: usize,
    pub variants: Vec<VariantRow>,
    /// At most `max_reported` of the base check, in the order found.
    pub found: Vec<Finding<C>>,
}

impl<C> BoundedReport<C> {
    /// Every variant's row added up (`options` left empty).
    pub fn total(&self) -> VariantRow {
        let mut t = VariantRow::default();
        for r in &self.variants {
            t.workloads += r.workloads;
            t.commits += r.commits;
            t.crash_points += r.crash_points;
            t.points_enumerated += r.points_enumerated;
            t.coverage.exhaustive += r.coverage.exhaustive;
            t.coverage.pages_and_tears += r.coverage.pages_and_tears;
            t.coverage.sampled += r.coverage.sampled;
            t.states += r.states;
            t.distinct_images += r.distinct_images;
            t.violating_states += r.violating_states;
            t.violating_workloads += r.violating_workloads;
        }
        t
    }
}

/// Check every workload of `space` under every variant of `base` (its engine's option grid ×
/// batched or not, or `base` alone for an engine without variants), telling `on_variant` about
/// each variant as it finishes. `base`'s operations are ignored; its parameters, control, seed,
/// `max_reported` and `stop_after` apply to the whole run.
pub(crate) fn check_all<E: Engine>(
    base: &CheckConfig<E::Config>,
    space: &Space,
    progress: &mut dyn FnMut(Progress<'_>),
) -> BoundedReport<E::Config> {
    // A counting walk first; each variant walks again rather than keep millions of workloads.
    let counts = enumerate(space, &mut |_| true);
    let variants = base.variants().unwrap_or_else(|_| vec![base.clone()]);
    progress(Progress::Enumerated {
        counts: &counts,
        variants: variants.len(),
    });
    let mut report = BoundedReport {
        space: space.clone(),
        counts,
        planned_variants: variants.len(),
        variants: Vec::new(),
        found: Vec::new(),
    };
    for variant in &variants {
        let row = check_variant::<E>(variant, space, &mut report);
        progress(Progress::Variant(&row));
        report.variants.push(row);
        if stop_reached(base, &report) {
            break;
        }
    }
    report
}

/// The engine's options as a case file writes them (or as a header describes them).
fn options_text<C: EngineConfig>(engine: &C) -> String {
    engine.to_case_text().unwrap_or_else(|| engine.describe())
}

fn stop_reached<C>(base: &CheckConfig<C>, report: &BoundedReport<C>) -> bool {
    let violating: u64 = report.variants.iter().map(|r| r.violating_states).sum();
    base.stop_after.is_some_and(|n| violating >= n)
}

/// What the workloads of one variant share.
#[derive(Default)]
struct Shared {
    book: Book,
    cache: Cache,
    points: BTreeSet<PointKey>,
}

/// Everything a crash point's states and verdicts depend on, within one variant.
#[derive(PartialEq, Eq, PartialOrd, Ord)]
struct PointKey {
    durable: ImageId,
    pending: Vec<(u64, ImageId)>,
    current: ImageId,
    allowed: usize,
    readers: Vec<(Option<Vec<u8>>, ModelId)>,
}

impl PointKey {
    /// The key of `p`, whose page cache has identity `current`.
    fn of(p: &CrashPoint, current: ImageId) -> PointKey {
        PointKey {
            durable: p.durable.id,
            pending: p.pending.iter().map(|s| (s.index, s.delta)).collect(),
            current,
            allowed: p.context.allowed,
            readers: p
                .context
                .readers
                .iter()
                .map(|r| (r.token.clone(), r.model))
                .collect(),
        }
    }
}

fn check_variant<E: Engine>(
    variant: &CheckConfig<E::Config>,
    space: &Space,
    report: &mut BoundedReport<E::Config>,
) -> VariantRow {
    let mut row = VariantRow {
        options: options_text(&variant.engine),
        batched: variant.params.batched,
        ..VariantRow::default()
    };
    let mut shared = Shared::default();
    let before: u64 = report.variants.iter().map(|r| r.violating_states).sum();
    enumerate(space, &mut |w| {
        let mut cfg = variant.clone();
        cfg.ops = space.alphabet.ops(w);
        // One finding per workload (its first), for at most `max_reported` workloads.
        let reported = variant
            .max_reported
            .saturating_sub(report.found.len())
            .min(1);
        cfg.max_reported = reported;
        cfg.stop_after = variant
            .stop_after
            .map(|n| n.saturating_sub(before + row.violating_states));
        if cfg.stop_after == Some(0) {
            return false;
        }
        let found = check_one::<E>(&cfg, &mut shared, &mut row);
        report
            .found
            .extend(found.into_iter().take(reported).map(|found| Finding {
                cfg: cfg.clone(),
                workload: describe(&space.alphabet, w),
                found,
            }));
        true
    });
    row
}

/// Check one workload with the variant's shared caches; what it reports.
fn check_one<E: Engine>(
    cfg: &CheckConfig<E::Config>,
    shared: &mut Shared,
    row: &mut VariantRow,
) -> Vec<Found> {
    let rec = drive::record::<E>(cfg, None, &mut shared.book);
    let book = std::mem::take(&mut shared.book);
    let cache = std::mem::take(&mut shared.cache);
    let mut ex = Explorer::<E>::with_cache(cfg, book, cache);
    let ss = cfg.params.sector_size as usize;
    let spp = u64::from(cfg.page_size() / cfg.params.sector_size).max(1);
    // Consecutive points often share one page-cache image: hash it once.
    let mut current: Option<(&Arc<Vec<u8>>, ImageId)> = None;
    for p in &rec.log.points {
        if ex.stopped() {
            break;
        }
        row.crash_points += 1;
        let sampled = states::coverage(&p.pending, spp, cfg.params.max_states) == Coverage::Sampled;
        let id = match current {
            Some((c, id)) if Arc::ptr_eq(c, &p.current) => id,
            _ => ImageId::of(&p.current, ss),
        };
        current = Some((&p.current, id));
        if sampled || shared.points.insert(PointKey::of(p, id)) {
            ex.point(p);
        }
    }
    if let Some(l) = rec.live {
        ex.live(l);
    }
    let (book, mut cache, r) = ex.into_parts();
    if r.violating_states > 0 {
        // A state unknown to this workload's book may be one a later workload commits.
        cache.retain(|_, rec| !matches!(rec, Recovery::State(None)));
    }
    shared.book = book;
    shared.cache = cache;
    row.workloads += 1;
    row.commits += rec.commits;
    row.points_enumerated += r.crash_points;
    row.coverage.exhaustive += r.coverage.exhaustive;
    row.coverage.pages_and_tears += r.coverage.pages_and_tears;
    row.coverage.sampled += r.coverage.sampled;
    row.states += r.states();
    row.distinct_images += r.distinct;
    row.violating_states += r.violating_states;
    row.violating_workloads += u64::from(r.violating_states > 0);
    r.found
}

impl<C: EngineConfig> BoundedReport<C> {
    /// The space and how it divides, for people.
    pub fn header(&self) -> String {
        space_header(&self.space, &self.counts)
    }

    /// The totals line; `wall_s` (measured by the caller) gives the rate.
    pub fn summary(&self, wall_s: Option<f64>) -> String {
        let t = self.total();
        let planned = self.counts.distinct * self.planned_variants as u64;
        let stopped = if t.workloads < planned {
            format!(" (stopped early: {} planned)", planned)
        } else {
            String::new()
        };
        let mut s = format!(
            "total: {} workloads × {} variants: {} checks{stopped} · commits {} · crash points {} \
             ({} distinct, enumerated: exhaustive {}, pages+tears {}, sampled {}) · states {} · \
             distinct images {} · violations: {} states in {} workloads ({} reported)\n",
            self.counts.distinct,
            self.planned_variants,
            t.workloads,
            t.commits,
            t.crash_points,
            t.points_enumerated,
            t.coverage.exhaustive,
            t.coverage.pages_and_tears,
            t.coverage.sampled,
            t.states,
            t.distinct_images,
            t.violating_states,
            t.violating_workloads,
            self.found.len(),
        );
        if let Some(wall) = wall_s {
            let per_s = |n: u64| n as f64 / wall.max(1e-9);
            s += &format!(
                "checked in {wall:.2} s: {:.0} checks/s, {:.0} states/s ({:.0} distinct images opened/s)\n",
                per_s(t.workloads),
                per_s(t.states),
                per_s(t.distinct_images)
            );
        }
        for f in &self.found {
            s += &format!(
                "  {} at op {}: {}\n    workload: {}\n    options: {} batched={}\n    crash state: {}\n",
                f.found.verdict,
                f.found.op,
                f.found.detail,
                f.workload,
                options_text(&f.cfg.engine),
                f.cfg.params.batched,
                f.found.state
            );
        }
        s
    }
}

/// The space of a run and how its raw workloads divide, for people.
pub fn space_header(space: &Space, c: &Counts) -> String {
    let a = &space.alphabet;
    let names = |v: Vec<String>| v.join(", ");
    let sequences: Vec<String> = (1..=a.tx_ops)
        .map(|m| match m {
            1 => a.acts().len().to_string(),
            _ => format!("{}^{m}", a.acts().len()),
        })
        .collect();
    format!(
        "all workloads of 1 to {} transactions: buckets {} · keys {} · values {} bytes · \
         1 to {} operations per transaction · {} · {}\n  \
         raw {} = T + … + T^{} with T = {} readers × {} endings × ({}) = {} · \
         refused by the model {} · valid {} · renamed duplicates {} · distinct {}\n",
        space.depth,
        names(
            a.buckets
                .iter()
                .map(crashlab_sim::op::path_to_string)
                .collect()
        ),
        names(a.keys.iter().map(ToString::to_string).collect()),
        names(a.lens.iter().map(ToString::to_string).collect()),
        a.tx_ops,
        if a.rollbacks {
            "commit or rollback"
        } else {
            "commit"
        },
        if a.readers {
            "a reader or not"
        } else {
            "no readers"
        },
        c.raw,
        space.depth,
        a.reader_choices().len(),
        a.endings().len(),
        sequences.join(" + "),
        a.raw_per_tx(),
        c.refused,
        c.valid,
        c.duplicates,
        c.distinct,
    )
}

/// The table's heading, for [`VariantRow::line`].
pub const TABLE_HEAD: &str = "| options | batched | workloads | crash points | enumerated | \
    exhaustive | states | distinct images | violating states (workloads) | states/s |\n\
    |---|---|---|---|---|---|---|---|---|---|\n";

impl VariantRow {
    /// The row for people; `wall_s` (measured by the caller) gives the rate.
    pub fn line(&self, wall_s: Option<f64>) -> String {
        format!(
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} ({}) | {} |\n",
            self.options,
            self.batched,
            self.workloads,
            self.crash_points,
            self.points_enumerated,
            self.coverage.exhaustive,
            self.states,
            self.distinct_images,
            self.violating_states,
            self.violating_workloads,
            wall_s.map_or("-".into(), |w| format!(
                "{:.0}",
                self.states as f64 / w.max(1e-9)
            ))
        )
    }
}
