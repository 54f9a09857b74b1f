//! The order in which engines take turns in `benches/interleaved.rs`, and the median it
//! reports: kept here, apart from the timing, so that tests can check them.

/// The engine (an index below `engines`) that runs each timed block, in order: `blocks` rounds,
/// in each of which every engine runs once, round `r` starting with engine `r mod engines`.
/// Over any `engines` consecutive rounds each engine runs first, second, … once, so none always
/// opens a round or always closes one. (Within a round engine `e` is always followed by
/// `e + 1`: the blocks last milliseconds and keep no state between engines but the machine's,
/// which they share.)
pub fn schedule(engines: usize, blocks: usize) -> impl Iterator<Item = usize> {
    (0..blocks).flat_map(move |round| (0..engines).map(move |k| (round + k) % engines))
}

/// The median of `values` (the mean of the middle two for an even count); `None` when empty.
pub fn median(values: &[f64]) -> Option<f64> {
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    match n {
        0 => None,
        _ if n % 2 == 1 => Some(v[n / 2]),
        _ => Some((v[n / 2 - 1] + v[n / 2]) / 2.0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_engine_runs_every_round_once() {
        let order: Vec<usize> = schedule(5, 7).collect();
        assert_eq!(order.len(), 35);
        for round in order.chunks(5) {
            let mut seen = round.to_vec();
            seen.sort();
            assert_eq!(seen, [0, 1, 2, 3, 4], "round {round:?}");
        }
    }

    #[test]
    fn each_engine_takes_each_place_equally_often() {
        let (engines, blocks) = (5, 20);
        let order: Vec<usize> = schedule(engines, blocks).collect();
        let mut places = vec![[0usize; 5]; engines];
        for round in order.chunks(engines) {
            for (place, &e) in round.iter().enumerate() {
                places[e][place] += 1;
            }
        }
        // 20 rounds over 5 places: each engine opens 4 rounds, closes 4, and so on.
        assert!(
            places.iter().all(|p| p.iter().all(|&n| n == 4)),
            "{places:?}"
        );
    }

    #[test]
    fn median_of_odd_even_and_empty() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), Some(2.5));
        assert_eq!(median(&[]), None);
    }
}
