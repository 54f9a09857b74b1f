//! Where a page's input comes from: a logged run of a case (`repro --html`, `explore
//! --html-dir`), or one crash state of the checker (`check --html-dir`, `repro --html` of a case
//! that pins a state), whose crash point, pending sectors and allowed states the checker gives.

use super::{render, Input, Pinned};
use crashlab_check::{state_view, CheckConfig, Replayed};
use crashlab_models::KvModel;
use crashlab_sim::adapter::Capabilities;
use crashlab_sim::adapter::{Engine, EngineConfig};
use crashlab_sim::calls::group_calls;
use crashlab_sim::case::{format_disk, format_faults};
use crashlab_sim::config::RunConfig;
use crashlab_sim::driver::{recover_image, Recovered};
use crashlab_sim::events::{CallRow, Event, EventLog, Fate, GroupLanes, PowerCut, Recovery, What};
use crashlab_sim::op::Op;
use crashlab_sim::report;
use crashlab_sim::runner::Report;
use crashlab_sim::spec::CrashState;
use crashlab_sim::verdict::Outcome;
use std::path::Path;
use std::sync::Arc;

/// The page of a logged run of `cfg`.
pub fn from_run<C: EngineConfig>(
    cfg: &RunConfig<C>,
    r: &Report,
    log: &EventLog,
    repro: String,
) -> String {
    let failing_op = match &r.outcome {
        Outcome::Violation(v) => Some(v.op_index),
        _ => None,
    };
    let counters = report::body(r)
        .lines()
        .skip(1)
        .map(|line| {
            let line = line.trim();
            match line.split_once(": ") {
                Some((k, v)) => (k.to_string(), v.to_string()),
                None => ("work".to_string(), line.to_string()),
            }
        })
        .collect();
    let input = Input {
        title: format!(
            "crashlab · seed {} · {} · {}",
            cfg.seed,
            C::ENGINE,
            cfg.profile
        ),
        header: run_header(cfg),
        outcome: report::outcome_line(&r.outcome),
        violation: r.outcome.is_violation(),
        repro,
        ops: cfg.ops.iter().map(ToString::to_string).collect(),
        failing_op,
        log,
        decode_pages: C::ENGINE == "crashlab",
        // A shrunk case pins one power cut: its minimal surviving set is outlined.
        pinned: cfg.pinned_cut.as_ref().map(|c| Pinned {
            cut: usize::try_from(c.cut.saturating_sub(1)).unwrap_or(usize::MAX),
            survivors: c.pin.survivors(),
        }),
        counters,
        sim_time_ns: r.io.sim_time_ns,
        page_size: page_size(&cfg.engine.describe()),
    };
    render(&input)
}

fn run_header<C: EngineConfig>(cfg: &RunConfig<C>) -> Vec<(String, String)> {
    vec![
        ("seed".into(), cfg.seed.to_string()),
        ("engine".into(), C::ENGINE.to_string()),
        ("options".into(), cfg.engine.describe()),
        ("fault profile".into(), cfg.profile.to_string()),
        ("faults".into(), format_faults(&cfg.disk.faults)),
        ("disk".into(), format_disk(&cfg.disk)),
        ("operations".into(), cfg.ops.len().to_string()),
    ]
}

/// `page_size=N` of an engine's options, if it names one.
fn page_size(options: &str) -> Option<u64> {
    options
        .split_whitespace()
        .find_map(|w| w.strip_prefix("page_size="))
        .and_then(|v| v.parse().ok())
}

/// The page of crash state `state` of the checker's workload `cfg`.
pub fn from_check<E: Engine>(
    cfg: &CheckConfig<E::Config>,
    state: &CrashState,
    repro: String,
) -> Result<String, String> {
    let view = state_view::<E>(cfg, state)?;
    let (outcome, violation) = match crashlab_check::replay::<E>(cfg, state) {
        Replayed::Violation { verdict, detail } => (format!("VIOLATION {verdict}: {detail}"), true),
        Replayed::Clean => ("ok: the state recovers as allowed".to_string(), false),
        Replayed::Missing(m) => return Err(format!("cannot replay this state: {m}")),
    };
    let process = matches!(state, CrashState::ProcessCrash { .. });
    let image = view
        .image
        .clone()
        .unwrap_or_else(|| view.current_image.clone());
    let stamp = |seq, what| Event {
        seq,
        op: view.op,
        sim_time_ns: 0,
        pending_sectors: view.pending.len() as u64,
        what,
    };
    let mut events: Vec<Event> = (0..=view.op)
        .map(|i| {
            let result = if i < view.op {
                "ran (the checker's recorded run)".to_string()
            } else {
                format!("the crash state: {state}, after storage call {}", view.call)
            };
            stamp(
                0,
                What::Op {
                    index: i,
                    op: cfg.ops.get(i).map(ToString::to_string).unwrap_or_default(),
                    result,
                    failed: false,
                },
            )
        })
        .collect();
    let caps = cfg.engine_config().capabilities();
    for (i, lanes) in planned_lanes(&cfg.ops, view.op, &caps) {
        events.push(Event {
            op: i,
            ..stamp(0, What::Group(lanes))
        });
    }
    let sectors = view
        .pending
        .iter()
        .map(|&s| {
            let kept = process || view.kept.contains(&s);
            (s, if kept { Fate::Survived } else { Fate::Lost })
        })
        .collect();
    events.push(stamp(
        0,
        What::PowerCut(PowerCut {
            sector_size: view.sector_size,
            sectors,
            image_before: Arc::new(view.current_image.clone()),
            image_after: Arc::new(image.clone()),
        }),
    ));
    if let Some(r) = recovery::<E>(cfg, &view, image, process) {
        events.push(stamp(0, What::Recovery(Box::new(r))));
    }
    let log = EventLog {
        events,
        lines: Vec::new(),
    };
    let run = cfg.run_config();
    let mut header = run_header(&run);
    header.retain(|(k, _)| k != "fault profile" && k != "faults");
    header.push(("check".into(), format!("{}", cfg.params.control)));
    header.push(("crash state".into(), state.to_string()));
    let input = Input {
        title: format!(
            "crashlab check · seed {} · {} · {state}",
            cfg.seed,
            E::Config::ENGINE
        ),
        header,
        outcome,
        violation,
        repro,
        ops: cfg.ops.iter().map(ToString::to_string).collect(),
        failing_op: Some(view.op),
        log: &log,
        decode_pages: E::Config::ENGINE == "crashlab",
        pinned: matches!(state, CrashState::PowerCut { .. }).then(|| Pinned {
            cut: 0,
            survivors: view.kept.clone(),
        }),
        counters: vec![
            (
                "crash point".into(),
                format!("after storage call {}", view.call),
            ),
            (
                "pending sectors".into(),
                format!("{} (that change the image)", view.pending.len()),
            ),
            ("kept by the state".into(), format!("{:?}", view.kept)),
            ("sector size".into(), format!("{} B", view.sector_size)),
            ("recovery".into(), recrash(state)),
        ],
        sim_time_ns: 0,
        page_size: page_size(&cfg.engine_config().describe()),
    };
    Ok(render(&input))
}

/// The lanes of each group of concurrent callers up to op `last`, from the workload itself: the
/// checker keeps no answers, so each call shows its caller, its operations and the batch the
/// group's pinned schedule puts it in (none when timing decides, as in the recorded run).
fn planned_lanes(ops: &[Op], last: usize, caps: &Capabilities) -> Vec<(usize, GroupLanes)> {
    let groups = ops.iter().enumerate().take(last.saturating_add(1));
    groups
        .filter_map(|(i, op)| match op {
            Op::Group {
                callers,
                calls,
                seed,
                schedule,
            } => {
                let specs = group_calls(*callers, *calls, *seed, caps);
                let rows = specs
                    .iter()
                    .map(|c| CallRow {
                        caller: c.caller,
                        ops: c.ops.iter().map(ToString::to_string).collect(),
                        fails: c.fails,
                        answer: "not recorded by the checker".into(),
                    })
                    .collect();
                let batches = schedule.as_ref().map_or(Vec::new(), |s| {
                    batches_of(&s.0, &specs.iter().map(|c| c.caller).collect::<Vec<_>>())
                });
                let lanes = GroupLanes {
                    callers: *callers,
                    calls: rows,
                    commits: batches.into_iter().map(|b| (b, None)).collect(),
                };
                Some((i, lanes))
            }
            _ => None,
        })
        .collect()
}

/// The calls (indexes into `callers`, each call's caller in group order) each batch of a
/// schedule holds: a batch takes the next call of each caller it names.
pub(super) fn batches_of(schedule: &[Vec<u32>], callers: &[u32]) -> Vec<Vec<usize>> {
    let mut taken = vec![false; callers.len()];
    schedule
        .iter()
        .map(|batch| {
            batch
                .iter()
                .filter_map(|&c| {
                    let i = (0..callers.len()).find(|&i| callers[i] == c && !taken[i])?;
                    taken[i] = true;
                    Some(i)
                })
                .collect()
        })
        .collect()
}

/// What a state does to the recovery: a second cut during it, or nothing.
fn recrash(state: &CrashState) -> String {
    match state {
        CrashState::PowerCut {
            recovery: Some((call, keep)),
            ..
        } => format!(
            "cut again after the recovery's storage call {call}, keeping its sectors {keep:?} \
             (the map shows the first cut; the image judged is the second's)"
        ),
        _ => "not interrupted".into(),
    }
}

/// The state's image opened as the application would, judged against the allowed states; none
/// when it does not open (the outcome line says why).
fn recovery<E: Engine>(
    cfg: &CheckConfig<E::Config>,
    view: &crashlab_check::StateView,
    image: Vec<u8>,
    process: bool,
) -> Option<Recovery> {
    let allowed: &[KvModel] = if process {
        &view.allowed_process
    } else {
        &view.allowed_power
    };
    let Recovered::State(observed) = recover_image::<E>(image, &cfg.engine_config()) else {
        return None;
    };
    let found = allowed.iter().rposition(|s| *s == observed);
    Some(Recovery {
        after_power_cut: !process,
        allowed: (0, allowed.len().saturating_sub(1)),
        allowed_states: allowed.to_vec(),
        observed,
        found,
        problems: Ok(Vec::new()),
    })
}

/// Write `page` to `path`; a message naming the file when it cannot.
pub fn write_page(path: &Path, page: &str) -> Result<(), String> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    }
    std::fs::write(path, page).map_err(|e| format!("cannot write {}: {e}", path.display()))
}
