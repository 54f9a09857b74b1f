//! `compare --plot DIR`: SVG charts of how the costs grow, from series of deterministic runs.
//!
//! - `large-db-set-time.svg`, `large-db-set-freelist-work.svg`: per durable Set, simulated
//!   device time and freelist work (ids moved plus scan steps), against the largest size the
//!   database ever reached, one line per freelist × sync variant.
//! - `commits-throughput.svg`: transactions per simulated second against writers, one line per
//!   merge strategy (and unbatched).
//! - `buffers-iavl.svg`, `buffers-geth.svg`: bytes every buffer reserved per commit against items
//!   per commit, one line per pre-size policy.

use super::{buffers, commits, large_db, Scale};
use plotters::prelude::*;
use std::path::{Path, PathBuf};

/// One line of a chart.
pub struct Line {
    pub label: String,
    pub points: Vec<(f64, f64)>,
}

/// One chart: file name, title, axis names, lines; both axes logarithmic.
pub struct Chart {
    pub file: &'static str,
    pub title: String,
    pub x: &'static str,
    pub y: &'static str,
    pub lines: Vec<Line>,
}

/// Compute every chart's series at `scale` and write the SVGs into `dir`; the files written.
pub fn write_all(dir: &Path, scale: Scale) -> Result<Vec<PathBuf>, String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut charts = large_db_charts(scale);
    charts.push(commits_chart(scale));
    charts.extend(buffer_charts(scale));
    charts
        .iter()
        .map(|chart| {
            let path = dir.join(chart.file);
            crashlab_sim::input::writable_target(&path)?; // a FIFO there would block the write
            draw(chart, &path).map_err(|e| format!("{}: {e}", path.display()))?;
            Ok(path)
        })
        .collect()
}

/// Template sizes: 1/16 to all of the scale's values.
fn large_db_charts(scale: Scale) -> Vec<Chart> {
    let full = large_db::Size::of(scale);
    let mut time: Vec<Line> = Vec::new();
    let mut work: Vec<Line> = Vec::new();
    for (name, _) in large_db::variants() {
        time.push(Line::new(name));
        work.push(Line::new(name));
    }
    for divisor in [16, 8, 4, 2, 1] {
        let size = large_db::Size {
            values: (full.values / divisor).max(1),
            ..full
        };
        let template = large_db::template(size);
        let mib = size.largest_ever() as f64 / f64::from(1 << 20);
        for (i, (_, options)) in large_db::variants().into_iter().enumerate() {
            let m = large_db::measure(&template, &options, size);
            let (c, io) = m.large_set;
            let per = |v: u64| v as f64 / size.sets as f64;
            time[i].points.push((mib, per(io.sim_time_ns) / 1000.0));
            let steps = c.freelist_ids_moved + c.freelist_scan_steps;
            work[i].points.push((mib, per(steps).max(0.1)));
        }
    }
    vec![
        Chart {
            file: "large-db-set-time.svg",
            title: "Durable Set on a database that was once large".into(),
            x: "largest-ever size (MiB)",
            y: "simulated device time per Set (µs)",
            lines: time,
        },
        Chart {
            file: "large-db-set-freelist-work.svg",
            title: "Freelist work per Set (ids moved + scan steps)".into(),
            x: "largest-ever size (MiB)",
            y: "ids moved + scan steps per Set",
            lines: work,
        },
    ]
}

fn commits_chart(scale: Scale) -> Chart {
    let txns = match scale {
        Scale::Small => 64,
        Scale::Seed => 1_024,
    };
    let lines = commits::VARIANTS
        .iter()
        .map(|(name, strategy)| Line {
            label: name.to_string(),
            points: [1usize, 2, 4, 8, 16, 32, 64]
                .iter()
                .map(|&w| (w as f64, commits::measure(w, *strategy, txns).throughput()))
                .collect(),
        })
        .collect();
    Chart {
        file: "commits-throughput.svg",
        title: "Durable transactions of one put, closed loop".into(),
        x: "writers",
        y: "transactions per simulated second",
        lines,
    }
}

fn buffer_charts(scale: Scale) -> Vec<Chart> {
    let items: [&[u64]; 2] = [&[1, 4, 16, 64, 256], &[16, 64, 256, 1024, 4096]];
    buffers::shapes(scale)
        .iter()
        .zip(items)
        .map(|(shape, items)| {
            let lines = buffers::POLICIES
                .iter()
                .map(|(name, policy)| Line {
                    label: name.to_string(),
                    points: items
                        .iter()
                        .map(|&n| {
                            let m = buffers::measure(shape, scale, n, *policy);
                            let reserved = m.engine.buffer_bytes_reserved as f64;
                            (n as f64, reserved / m.commits as f64 / 1024.0)
                        })
                        .collect(),
                })
                .collect();
            Chart {
                file: if shape.name == "iavl" {
                    "buffers-iavl.svg"
                } else {
                    "buffers-geth.svg"
                },
                title: format!(
                    "Buffer bytes reserved per commit, {}-shaped batches",
                    shape.name
                ),
                x: if shape.name == "iavl" {
                    "inserts per version"
                } else {
                    "nodes per flush"
                },
                y: "KiB reserved per commit (all buffers)",
                lines,
            }
        })
        .collect()
}

impl Line {
    fn new(label: &str) -> Line {
        Line {
            label: label.to_string(),
            points: Vec::new(),
        }
    }
}

/// From the power of ten at or below the smallest positive value to the one at or above the
/// largest, so every axis has labelled decades however narrow the data.
fn log_range(values: impl Iterator<Item = f64>) -> std::ops::Range<f64> {
    let (lo, hi) = values
        .filter(|v| *v > 0.0)
        .fold((f64::MAX, f64::MIN), |(lo, hi), v| (lo.min(v), hi.max(v)));
    if lo > hi {
        return 0.1..1.0;
    }
    let decade = |v: f64, round: fn(f64) -> f64| 10f64.powf(round(v.log10()));
    let (lo, hi) = (decade(lo / 1.2, f64::floor), decade(hi * 1.2, f64::ceil));
    lo..hi.max(lo * 10.0)
}

/// An axis label: no decimals from 10 up, one below.
fn number(v: f64) -> String {
    if v >= 10.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.1}")
    }
}

fn draw(chart: &Chart, path: &Path) -> Result<(), Box<dyn std::error::Error>> {
    let root = SVGBackend::new(path, (800, 500)).into_drawing_area();
    root.fill(&WHITE)?;
    let points = || chart.lines.iter().flat_map(|l| l.points.iter());
    let xs = log_range(points().map(|p| p.0));
    let ys = log_range(points().map(|p| p.1));
    let mut c = ChartBuilder::on(&root)
        .caption(&chart.title, ("sans-serif", 20))
        .margin(15)
        .x_label_area_size(45)
        .y_label_area_size(75)
        .build_cartesian_2d(xs.log_scale(), ys.log_scale())?;
    c.configure_mesh()
        .x_desc(chart.x)
        .y_desc(chart.y)
        .light_line_style(BLACK.mix(0.04))
        .x_label_formatter(&|v| number(*v))
        .y_label_formatter(&|v| number(*v))
        .draw()?;
    for (i, line) in chart.lines.iter().enumerate() {
        let color = Palette99::pick(i).to_rgba();
        c.draw_series(LineSeries::new(line.points.clone(), color.stroke_width(2)))?
            .label(line.label.clone())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color));
        c.draw_series(
            line.points
                .iter()
                .map(|p| Circle::new(*p, 3, color.filled())),
        )?;
    }
    c.configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .border_style(BLACK)
        .background_style(WHITE.mix(0.9))
        .draw()?;
    root.present()?;
    Ok(())
}
