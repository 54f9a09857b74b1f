//! Pre-sized buffers (docs/DESIGN.md, "The three findings", item 3: IAVL and go-ethereum): the two
//! batch-building shapes of `crate::shapes` under each `PresizePolicy`, committed durably on the
//! simulated disk with `Options::presize` set to the same policy (so the engine's commit page
//! buffer and freelist page follow it too).
//!
//! Per commit: the application batch's records and buffer work — allocations with each growth
//! counted as one, bytes reserved (every growth's new buffer in full, as Go's B/op counts it),
//! bytes copied by growth, sizing-pass steps — then every buffer's reserved bytes (the
//! application's and the engine's), and the commit's simulated device time, which the policy
//! must not change.

use super::{quiet_disk, Scale, Table};
use crate::shapes::workload::{BatchBuilder, GethWorkload, IavlWorkload};
use crate::shapes::BUCKET;
use crashlab_engine::BufferWork;
use crashlab_engine::{Counters, Db, Options, PresizePolicy};
use std::time::Duration;

pub const POLICIES: [(&str, PresizePolicy); 3] = [
    ("grow", PresizePolicy::Grow),
    ("exact", PresizePolicy::Exact),
    ("estimate", PresizePolicy::Estimate),
];

/// One shape at one scale: a name, how to make it, items per commit and commits measured.
pub struct ShapeRun {
    pub name: &'static str,
    pub make: fn(Scale) -> Box<dyn BatchBuilder>,
    pub items: u64,
    pub commits: u64,
}

pub fn shapes(scale: Scale) -> [ShapeRun; 2] {
    let commits = match scale {
        Scale::Small => 10,
        Scale::Seed => 100,
    };
    [
        ShapeRun {
            name: "iavl",
            make: |scale| {
                let preload = match scale {
                    Scale::Small => 2_000,
                    Scale::Seed => 20_000,
                };
                Box::new(IavlWorkload::preloaded(1, preload))
            },
            items: 50,
            commits,
        },
        ShapeRun {
            name: "geth",
            make: |_| Box::new(GethWorkload::new(2)),
            items: match scale {
                Scale::Small => 200,
                Scale::Seed => 1_000,
            },
            commits,
        },
    ]
}

/// The totals of one shape under one policy.
#[derive(Clone, Copy, Debug, Default)]
pub struct Measured {
    pub commits: u64,
    pub records: u64,
    /// The application's batches.
    pub batch: BufferWork,
    /// The engine during those commits (its buffer counters include the batches handed to it).
    pub engine: Counters,
    pub sim_time_ns: u64,
}

pub fn table(scale: Scale) -> Table {
    let mut rows = Vec::new();
    for shape in shapes(scale) {
        for (name, policy) in POLICIES {
            let m = measure(&shape, scale, shape.items, policy);
            let per = |v: u64| v as f64 / m.commits as f64;
            let values = vec![
                per(m.records),
                per(m.batch.allocations + m.batch.reallocations),
                per(m.batch.bytes_reserved) / 1024.0,
                per(m.batch.bytes_copied_by_growth) / 1024.0,
                per(m.batch.size_computation_steps),
                per(m.engine.buffer_bytes_reserved) / 1024.0,
                per(m.sim_time_ns) / 1000.0,
            ];
            let group = format!("{} ×{}", shape.name, shape.items);
            rows.push((group, name.to_string(), values));
        }
    }
    Table::new(
        "buffers",
        scale,
        "per durable commit of one application batch (iavl: one version of 50 inserts; geth: one \
         flush of buffered trie nodes)",
        &[
            "records",
            "batch_allocs",
            "batch_reserved_KiB",
            "batch_copied_KiB",
            "size_steps",
            "all_reserved_KiB",
            "sim_us",
        ],
        ("grow", "all_reserved_KiB"),
        rows,
    )
}

/// Run `shape.commits` commits of `items` items each under `policy`.
pub fn measure(shape: &ShapeRun, scale: Scale, items: u64, policy: PresizePolicy) -> Measured {
    let disk = quiet_disk();
    let options = Options {
        presize: policy,
        max_batch_delay: Duration::ZERO,
        ..Options::default()
    };
    let db = Db::open(disk.clone(), options).expect("open");
    db.update(|tx| tx.create_bucket(BUCKET).map(drop))
        .expect("bucket");
    let mut builder = (shape.make)(scale);
    let (c0, io0) = (db.counters(), disk.io_stats());
    let mut m = Measured {
        commits: shape.commits,
        ..Measured::default()
    };
    for _ in 0..shape.commits {
        builder.prepare(items);
        let batch = builder.build(policy);
        m.records += batch.len() as u64;
        m.batch.add(&batch.buffer_work());
        db.write(batch).expect("write");
    }
    m.engine = db.counters().since(&c0);
    m.sim_time_ns = disk.io_stats().since(&io0).sim_time_ns;
    m
}
