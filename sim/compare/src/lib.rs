//! `crashlab compare`: what a storage-engine change costs, as deterministic counter tables.
//!
//! Each scenario runs on the simulated disk (no faults) with the default cost model, so every
//! figure — counters and simulated device time alike — is a function of the code and the scale
//! only: a table does not move when the machine is noisy, and a snapshot diff means the engine's
//! behaviour changed. The catalogue (docs/DESIGN.md, "The three findings"):
//!
//! | scenario | variants | per |
//! |---|---|---|
//! | `large-db-set` | freelist array / hashmap × synced / not synced | Set on a database that once grew large |
//! | `large-db-reopen` | the same | reopen of that database |
//! | `commits` | unbatched / Append / Rebuild × 1–64 simulated writers | transaction |
//! | `commit-batch-sizes` | the same | commit: the distribution of batch sizes |
//! | `buffers` | Grow / Exact / Estimate × IAVL- and geth-shaped batches | commit |
//!
//! Every table names a baseline variant; each row's ratio divides its value in the table's
//! ratio column by the baseline row's value in the same group.
//!
//! `--engine redb` adds (or, alone, shows only) redb's rows in the scenarios it shares with
//! crashlab's engine — large-db-set, large-db-reopen and commits — on the same disk and cost
//! model, with ratios against crashlab's baseline. `buffers` compares crashlab's own pre-size
//! policies and has no redb row.
//!
//! `--engine sqlite` adds SQLite's rows to `commits` (two power-safe modes, one transaction
//! per commit, on a fault-free SimFs): the one scenario whose workload maps onto SQLite without
//! crashlab's engine's counters.

#![forbid(unsafe_code)]

pub mod buffers;
pub mod commits;
pub mod large_db;
pub mod memory;
pub mod plot;
pub mod redb;
pub mod scale;
pub mod shapes;
pub mod sqlite;
pub mod table;

pub use table::{Row, Table};

use crashlab_sim::disk::{DiskConfig, SimDisk};
use std::fmt;
use std::path::Path;
use std::str::FromStr;

/// The engines `compare` has rows for: crashlab's variants, and redb in the scenarios it shares.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum EngineKind {
    #[default]
    Crashlab,
    Redb,
    Sqlite,
}

impl EngineKind {
    pub const ALL: [EngineKind; 3] = [EngineKind::Crashlab, EngineKind::Redb, EngineKind::Sqlite];

    pub fn name(self) -> &'static str {
        match self {
            EngineKind::Crashlab => "crashlab",
            EngineKind::Redb => "redb",
            EngineKind::Sqlite => "sqlite",
        }
    }
}

impl fmt::Display for EngineKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for EngineKind {
    type Err = String;
    fn from_str(s: &str) -> Result<EngineKind, String> {
        EngineKind::ALL
            .into_iter()
            .find(|e| e.name() == s)
            .ok_or_else(|| {
                format!("unknown engine `{s}`: compare has rows for crashlab, redb and sqlite")
            })
    }
}

pub use scale::{Scale, Size};

/// The scenarios, in the order `compare` runs them.
pub const SCENARIOS: [&str; 5] = [
    "large-db-set",
    "large-db-reopen",
    "commits",
    "commit-batch-sizes",
    "buffers",
];

/// The engines each scenario has rows for, known before anything runs: a scenario asked of
/// engines it has no rows for is refused at once (at the seed scale a scenario runs for
/// minutes), and one none of `engines` is in is not run at all. `tests/compare.rs` checks this
/// against the rows every scenario produces.
pub fn engines_of(scenario: &str) -> &'static [EngineKind] {
    use EngineKind::{Crashlab, Redb, Sqlite};
    match scenario {
        "large-db-set" | "large-db-reopen" => &[Crashlab, Redb],
        "commits" => &[Crashlab, Redb, Sqlite],
        "commit-batch-sizes" | "buffers" => &[Crashlab],
        other => panic!("`{other}` is not one of SCENARIOS"),
    }
}

/// The tables of `scenario` (or of every scenario) at `scale`, with the rows of `engines`.
/// crashlab's variants are always measured (other engines' ratios are against its baseline);
/// another engine only when asked for. A scenario an engine has no rows in is left out, or is
/// an error when it is the scenario asked for.
pub fn run(
    scenario: Option<&str>,
    scale: Scale,
    engines: &[EngineKind],
) -> Result<Vec<Table>, String> {
    if let Some(s) = scenario {
        if !SCENARIOS.contains(&s) {
            let known = SCENARIOS.join(", ");
            return Err(format!("unknown scenario `{s}`; expected one of {known}"));
        }
    }
    if engines.is_empty() {
        return Err("no engine to compare".into());
    }
    let has_rows = |name: &str| engines_of(name).iter().any(|e| engines.contains(e));
    if let Some(s) = scenario.filter(|s| !has_rows(s)) {
        return Err(no_rows(s, engines));
    }
    let wanted = |name: &str| scenario.is_none_or(|s| s == name) && has_rows(name);
    let with_redb = engines.contains(&EngineKind::Redb);
    let with_sqlite = engines.contains(&EngineKind::Sqlite);
    let mut tables = Vec::new();
    if wanted("large-db-set") || wanted("large-db-reopen") {
        let (set, reopen) = large_db::tables(scale, with_redb);
        tables.extend(wanted("large-db-set").then_some(set));
        tables.extend(wanted("large-db-reopen").then_some(reopen));
    }
    if wanted("commits") {
        tables.push(commits::table(scale, with_redb, with_sqlite));
    }
    if wanted("commit-batch-sizes") {
        tables.push(commits::batch_sizes_table(scale));
    }
    if wanted("buffers") {
        tables.push(buffers::table(scale));
    }
    let kept: Vec<Table> = tables.into_iter().filter_map(|t| t.only(engines)).collect();
    match scenario {
        Some(s) if kept.is_empty() => Err(no_rows(s, engines)),
        _ => Ok(kept),
    }
}

fn no_rows(scenario: &str, engines: &[EngineKind]) -> String {
    let has: Vec<&str> = engines_of(scenario).iter().map(|e| e.name()).collect();
    format!(
        "`{scenario}` has no rows for {}: it has rows for {} only",
        names(engines),
        has.join(", ")
    )
}

fn names(engines: &[EngineKind]) -> String {
    let names: Vec<&str> = engines.iter().map(|e| e.name()).collect();
    names.join(", ")
}

/// `crashlab compare`: print the tables (text or JSON) and write the charts; the exit code
/// (0, or 2 for an unknown scenario or an unwritable plot directory).
pub fn cli(
    scenario: Option<&str>,
    scale: Scale,
    engines: &[EngineKind],
    json: bool,
    plot: Option<&Path>,
) -> u8 {
    let tables = match run(scenario, scale, engines) {
        Ok(tables) => tables,
        Err(e) => {
            eprintln!("crashlab compare: {e}");
            return 2;
        }
    };
    if json {
        let text = serde_json::to_string_pretty(&tables).expect("tables serialise");
        println!("{text}");
    } else {
        for t in &tables {
            println!("{}", t.render());
        }
    }
    // Beside the tables' figures, on stderr: a measurement, not a deterministic counter.
    if let Some(m) = large_db::last_template_memory() {
        let mib = |b: u64| b as f64 / f64::from(1 << 20);
        eprintln!(
            "large-db simulated file: {:.1} MiB; its disks held {:.1} MiB ({:.2}x)",
            mib(m.file_bytes),
            mib(m.held_bytes),
            m.held_bytes as f64 / m.file_bytes.max(1) as f64
        );
    }
    if let Some(line) = memory::report_line() {
        eprintln!("{line}");
    }
    let Some(dir) = plot else {
        return 0;
    };
    match plot::write_all(dir, scale) {
        Ok(files) => {
            for f in files {
                eprintln!("wrote {}", f.display());
            }
            0
        }
        Err(e) => {
            eprintln!("crashlab compare --plot: {e}");
            2
        }
    }
}

/// A fault-free simulated disk with 4 KiB sectors (fewer sectors to track for large files; the
/// cost model charges bytes, not sectors).
pub(crate) fn quiet_disk() -> SimDisk {
    SimDisk::new(0, quiet_config())
}

/// The configuration of [`quiet_disk`].
pub(crate) fn quiet_config() -> DiskConfig {
    DiskConfig {
        sector_size: 4096,
        ..DiskConfig::default()
    }
}
