//! Choosing a subset of a run from the environment (`CRASHLAB_BENCH_ENGINES`,
//! `CRASHLAB_BENCH_GROUPS`, `CRASHLAB_BENCH_MODES`), shared by every benchmark target.

/// Whether `name` is in the comma-separated list in environment variable `var` (or the
/// variable is unset).
pub fn selected(var: &str, name: &str) -> bool {
    match std::env::var(var) {
        Ok(list) => list.split(',').any(|s| s.trim() == name),
        Err(_) => true,
    }
}
