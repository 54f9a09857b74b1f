//! `--saturation-svg FILE`: the saturation curve of a sweep or a merged report as an SVG chart —
//! new behaviours (coverage signatures' components never met before) per window of seeds (left
//! axis) and behaviours met so far (right axis), against seeds run. A curve that lies on zero
//! says the sweep has stopped finding new behaviour.

use crashlab_sim::saturation::{Saturation, WINDOW_SEEDS};
use plotters::prelude::*;
use std::path::Path;

/// Write the chart of `s` to `path`.
pub fn write(s: &Saturation, path: &Path) -> Result<(), String> {
    crashlab_sim::input::writable_target(path)?; // a FIFO there would block the write
    draw(s, path).map_err(|e| format!("{}: {e}", path.display()))
}

/// (seeds run at the end of each window, new behaviours in it, behaviours met so far).
fn points(s: &Saturation) -> Vec<(f64, f64, f64)> {
    let windows = s.new_per_window();
    let mut distinct = 0u64;
    windows
        .iter()
        .enumerate()
        .map(|(i, &new)| {
            distinct += new;
            let seeds = if i + 1 == windows.len() {
                s.seeds()
            } else {
                (i as u64 + 1) * WINDOW_SEEDS
            };
            (seeds as f64, new as f64, distinct as f64)
        })
        .collect()
}

fn draw(s: &Saturation, path: &Path) -> Result<(), Box<dyn std::error::Error>> {
    let pts = points(s);
    let x_max = (s.seeds() as f64).max(1.0);
    let new_max = pts.iter().map(|p| p.1).fold(1.0, f64::max) * 1.1;
    let distinct_max = (s.distinct() as f64).max(1.0) * 1.1;
    let root = SVGBackend::new(path, (800, 500)).into_drawing_area();
    root.fill(&WHITE)?;
    let title = format!(
        "New behaviour per {WINDOW_SEEDS} seeds ({} behaviours met in {} seeds)",
        s.distinct(),
        s.seeds()
    );
    let mut c = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 20))
        .margin(15)
        .x_label_area_size(45)
        .y_label_area_size(65)
        .right_y_label_area_size(65)
        .build_cartesian_2d(0.0..x_max, 0.0..new_max)?
        .set_secondary_coord(0.0..x_max, 0.0..distinct_max);
    c.configure_mesh()
        .x_desc("seeds run")
        .y_desc(format!("new behaviours per {WINDOW_SEEDS} seeds"))
        .light_line_style(BLACK.mix(0.04))
        .x_label_formatter(&|v| format!("{v:.0}"))
        .y_label_formatter(&|v| format!("{v:.0}"))
        .draw()?;
    c.configure_secondary_axes()
        .y_desc("behaviours met so far")
        .label_style(("sans-serif", 12))
        .y_label_formatter(&|v| format!("{v:.0}"))
        .draw()?;
    let new_color = Palette99::pick(0).to_rgba();
    let new: Vec<(f64, f64)> = pts.iter().map(|p| (p.0, p.1)).collect();
    c.draw_series(LineSeries::new(new.clone(), new_color.stroke_width(2)))?
        .label("new behaviours in the window")
        .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], new_color));
    c.draw_series(new.iter().map(|p| Circle::new(*p, 3, new_color.filled())))?;
    let total_color = Palette99::pick(1).to_rgba();
    let total: Vec<(f64, f64)> = std::iter::once((0.0, 0.0))
        .chain(pts.iter().map(|p| (p.0, p.2)))
        .collect();
    c.draw_secondary_series(LineSeries::new(total, total_color.stroke_width(2)))?
        .label("behaviours met so far (right axis)")
        .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], total_color));
    c.configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .border_style(BLACK)
        .background_style(WHITE.mix(0.9))
        .draw()?;
    root.present()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_curve_ends_at_the_seeds_run_and_sums_to_the_distinct_count() {
        let mut s = Saturation::default();
        for i in 0..2500u64 {
            s.add(&crashlab_sim::signature::Signature {
                components: [i % 40 + i / 1000; 5],
            });
        }
        let p = points(&s);
        assert_eq!(p.len(), 3);
        assert_eq!(p[0].0, 1000.0);
        assert_eq!(p[2].0, 2500.0);
        assert_eq!(p[2].2, s.distinct() as f64);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.svg");
        write(&s, &path).unwrap();
        let svg = std::fs::read_to_string(&path).unwrap();
        assert!(svg.starts_with("<svg") && svg.contains("New behaviour per 1000 seeds"));
    }
}
