//! The chart of a run: pending (unsynced) sectors against simulated time, with the power cuts
//! marked, drawn by plotters as SVG text (no fonts are loaded: labels are SVG `<text>`).

use plotters::prelude::*;

/// `points`: (simulated ms, pending sectors) in time order; `cuts`: the power cuts' points.
pub fn pending_svg(points: &[(f64, f64)], cuts: &[(f64, f64)]) -> String {
    let mut svg = String::new();
    if let Err(e) = draw(&mut svg, points, cuts) {
        return format!("<p>chart not drawn: {e}</p>");
    }
    svg
}

fn draw<'s>(
    svg: &'s mut String,
    points: &[(f64, f64)],
    cuts: &[(f64, f64)],
) -> Result<(), Box<dyn std::error::Error + 's>> {
    let root = SVGBackend::with_string(svg, (760, 260)).into_drawing_area();
    root.fill(&WHITE)?;
    let x_max = points.iter().map(|p| p.0).fold(0.0, f64::max).max(0.001);
    let y_max = points.iter().map(|p| p.1).fold(0.0, f64::max).max(1.0);
    let mut c = ChartBuilder::on(&root)
        .margin(10)
        .x_label_area_size(35)
        .y_label_area_size(50)
        .build_cartesian_2d(0.0..x_max * 1.02, 0.0..y_max * 1.1)?;
    c.configure_mesh()
        .x_desc("simulated time (ms)")
        .y_desc("pending sectors")
        .light_line_style(BLACK.mix(0.05))
        .x_label_formatter(&|v| format!("{v:.2}"))
        .y_label_formatter(&|v| format!("{v:.0}"))
        .draw()?;
    let line = RGBColor(0x33, 0x66, 0xcc);
    c.draw_series(LineSeries::new(
        points.iter().copied(),
        line.stroke_width(2),
    ))?;
    c.draw_series(cuts.iter().map(|p| Circle::new(*p, 5, RED.filled())))?;
    root.present()?;
    Ok(())
}
