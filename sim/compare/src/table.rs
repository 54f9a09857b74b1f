//! A comparison table: one row per variant, one column per counter, and a ratio against a
//! baseline variant. Rendered as text (what snapshots hold) or serialised as JSON.

use super::Scale;
use crate::redb::REDB_VARIANT;
use crate::EngineKind;
use std::fmt::Write as _;

#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Table {
    /// Scenario name, as `--scenario` takes it.
    pub scenario: String,
    pub scale: Scale,
    /// One line saying what a row measures and per what.
    pub description: String,
    pub columns: Vec<String>,
    /// Variant name of the baseline row in each group.
    pub baseline: String,
    /// The column the ratio divides.
    pub ratio_column: String,
    pub rows: Vec<Row>,
}

#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Row {
    /// Rows are compared with the baseline row of the same group ("" when there is one group).
    pub group: String,
    /// The engine the row measures: crashlab's variants, or another engine's row (whose variant
    /// is the engine's name), compared with crashlab's baseline.
    pub engine: EngineKind,
    pub variant: String,
    pub values: Vec<f64>,
    /// This row's ratio-column value over its group's baseline's (None without a baseline or
    /// when the baseline's value is 0).
    pub ratio: Option<f64>,
}

impl Table {
    /// A table whose rows' ratios are computed from `rows`' values.
    pub fn new(
        scenario: &str,
        scale: Scale,
        description: &str,
        columns: &[&str],
        (baseline, ratio_column): (&str, &str),
        rows: Vec<(String, String, Vec<f64>)>,
    ) -> Table {
        let at = columns
            .iter()
            .position(|c| *c == ratio_column)
            .expect("the ratio column is one of the columns");
        let value_of = |group: &str| {
            rows.iter()
                .find(|(g, v, _)| g == group && v == baseline)
                .map(|(_, _, values)| values[at])
        };
        let rows = rows
            .iter()
            .map(|(group, variant, values)| {
                assert_eq!(values.len(), columns.len(), "{scenario}: row {variant}");
                let base = value_of(group).filter(|b| *b != 0.0);
                Row {
                    group: group.clone(),
                    engine: if variant == REDB_VARIANT {
                        EngineKind::Redb
                    } else if variant.starts_with(crate::sqlite::SQLITE_VARIANT_PREFIX) {
                        EngineKind::Sqlite
                    } else {
                        EngineKind::Crashlab
                    },
                    variant: variant.clone(),
                    values: values.clone(),
                    ratio: base.map(|b| values[at] / b),
                }
            })
            .collect();
        Table {
            scenario: scenario.to_string(),
            scale,
            description: description.to_string(),
            columns: columns.iter().map(|c| c.to_string()).collect(),
            baseline: baseline.to_string(),
            ratio_column: ratio_column.to_string(),
            rows,
        }
    }

    /// This table with the rows of `engines` only (ratios stay against the baseline, which may
    /// be left out); `None` when no row is left.
    pub fn only(mut self, engines: &[EngineKind]) -> Option<Table> {
        self.rows.retain(|r| engines.contains(&r.engine));
        (!self.rows.is_empty()).then_some(self)
    }

    /// The value of `column` in the row of `group` and `variant`.
    pub fn value(&self, group: &str, variant: &str, column: &str) -> Option<f64> {
        let at = self.columns.iter().position(|c| c == column)?;
        let row = self
            .rows
            .iter()
            .find(|r| r.group == group && r.variant == variant)?;
        Some(row.values[at])
    }

    /// Fixed-width text: a header naming the scenario, scale and baseline, then the rows.
    pub fn render(&self) -> String {
        let scale = match self.scale {
            Scale::Small => "small",
            Scale::Seed => "seed",
        };
        let mut out = format!("== {} ({scale}) — {}\n", self.scenario, self.description);
        let _ = writeln!(
            out,
            "ratio: {} against `{}` in the same group",
            self.ratio_column, self.baseline
        );
        let mut header = vec!["group".to_string(), "variant".to_string()];
        header.extend(self.columns.iter().cloned());
        header.push("ratio".to_string());
        let body: Vec<Vec<String>> = self.rows.iter().map(cells).collect();
        let widths: Vec<usize> = (0..header.len())
            .map(|i| {
                body.iter()
                    .map(|r| r[i].len())
                    .chain([header[i].len()])
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        for line in std::iter::once(&header).chain(&body) {
            let padded: Vec<String> = line
                .iter()
                .zip(&widths)
                .enumerate()
                .map(|(i, (cell, w))| match i {
                    0 | 1 => format!("{cell:<w$}"),
                    _ => format!("{cell:>w$}"),
                })
                .collect();
            let _ = writeln!(out, "{}", padded.join("  ").trim_end());
        }
        out
    }
}

fn cells(row: &Row) -> Vec<String> {
    let mut cells = vec![row.group.clone(), row.variant.clone()];
    cells.extend(row.values.iter().map(|v| number(*v)));
    cells.push(row.ratio.map_or("-".to_string(), |r| format!("{r:.3}x")));
    cells
}

/// Integers as integers, everything else with two decimals: deterministic, and readable; "-"
/// for a figure the variant does not have (NaN, `null` in JSON).
fn number(v: f64) -> String {
    if !v.is_finite() {
        return "-".to_string();
    }
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{v:.0}")
    } else {
        format!("{v:.2}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Table {
        let rows = vec![
            ("g1".into(), "base".into(), vec![2.0, 10.0]),
            ("g1".into(), "other".into(), vec![3.5, 25.0]),
            ("g2".into(), "base".into(), vec![0.0, 0.0]),
            ("g2".into(), "other".into(), vec![1.0, 4.0]),
        ];
        Table::new(
            "demo",
            Scale::Small,
            "per thing",
            &["a", "b"],
            ("base", "b"),
            rows,
        )
    }

    #[test]
    fn ratios_are_against_the_baseline_of_the_same_group() {
        let t = sample();
        let ratios: Vec<_> = t.rows.iter().map(|r| r.ratio).collect();
        // g2's baseline is 0: no ratio rather than infinity.
        assert_eq!(ratios, [Some(1.0), Some(2.5), None, None]);
        assert_eq!(t.value("g1", "other", "a"), Some(3.5));
        assert_eq!(t.value("g1", "other", "c"), None);
    }

    #[test]
    fn render_aligns_columns_and_formats_numbers() {
        let text = sample().render();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "== demo (small) — per thing");
        assert_eq!(lines[2], "group  variant     a   b   ratio");
        assert_eq!(lines[4], "g1     other    3.50  25  2.500x");
        assert_eq!(lines[5], "g2     base        0   0       -");
    }
}
