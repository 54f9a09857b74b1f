//! "When can we stop?": explore prints the behaviours a sweep met and the new ones per 1,000
//! seeds, and plots them. On a sweep of one kind of workload the curve falls; the negative
//! control (`--debug-control seed-in-signature`, a signature that names the run rather than
//! its behaviour) makes every seed look new, and the same check must see the curve stay flat.

use crate::common;

use common::{crashlab_within, text};

/// The new behaviours per full window of `explore --seeds 0..2000 --ops 20 --profile none`.
fn windows(extra: &[&str], dir: &std::path::Path) -> Vec<u64> {
    let mut args = vec![
        "explore",
        "--seeds",
        "0..2000",
        "--ops",
        "20",
        "--profile",
        "none",
    ];
    args.extend(extra);
    let o = crashlab_within(300, &args, dir);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(0), "{t}");
    let line = t
        .lines()
        .find(|l| l.starts_with("behaviours "))
        .unwrap_or_else(|| panic!("no saturation line in:\n{t}"));
    assert!(line.contains(" in 2000 seeds "), "{line}");
    let curve = line.split("per 1000 seeds:").nth(1).unwrap();
    curve
        .split_whitespace()
        .map(|n| n.parse().unwrap_or_else(|_| panic!("`{n}` in {line}")))
        .collect()
}

#[test]
fn the_curve_falls_and_is_plotted_and_the_seed_in_signature_control_keeps_it_flat() {
    let dir = tempfile::tempdir().unwrap();
    let clean = windows(&["--saturation-svg", "curve.svg"], dir.path());
    assert_eq!(clean.len(), 2, "{clean:?}");
    assert!(clean[0] > 0, "{clean:?}");
    // The curve falls: the second 1000 seeds find clearly fewer new behaviours than the first
    // (with every dimension the sweep reports in the signature, about half as many), and far
    // fewer than the seed-in-signature control below, which never falls under 1000.
    assert!(
        clean[1] * 4 < clean[0] * 3 && clean[1] < 1000,
        "the second 1000 seeds found less: {clean:?}"
    );
    let svg = std::fs::read_to_string(dir.path().join("curve.svg")).unwrap();
    assert!(svg.starts_with("<svg"), "{}", &svg[..svg.len().min(200)]);
    assert!(svg.contains("New behaviour per 1000 seeds"));
    assert!(svg.contains("in 2000 seeds"));
    let control = windows(&["--debug-control", "seed-in-signature"], dir.path());
    assert_eq!(control.len(), 2, "{control:?}");
    // Every seed brings at least its own new component: the curve cannot fall below 1000.
    assert!(control.iter().all(|&n| n >= 1000), "{control:?}");
}
