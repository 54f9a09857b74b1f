//! The minimal set of persisted sectors behind a violation: greedy shrinking of the kept set.
//!
//! Each kept sector is dropped in turn (ascending) and the drop stays when the state without it
//! still shows the same violation. The result is 1-minimal: no single sector can be left out of
//! it. It may be empty — then the durable image alone shows the violation.

/// Shrink `kept` while `still_fails` holds; `kept` itself must fail.
pub(crate) fn minimise(kept: Vec<u32>, still_fails: &mut dyn FnMut(&[u32]) -> bool) -> Vec<u32> {
    let mut best = kept;
    let mut i = 0;
    while i < best.len() {
        let mut trial = best.clone();
        trial.remove(i);
        if still_fails(&trial) {
            best = trial; // the next sector slid into place `i`
        } else {
            i += 1;
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_only_what_the_failure_needs() {
        // Fails while 3 and 7 are both kept.
        let mut calls = 0;
        let min = minimise(vec![1, 3, 5, 7, 9], &mut |k| {
            calls += 1;
            k.contains(&3) && k.contains(&7)
        });
        assert_eq!(min, vec![3, 7]);
        assert_eq!(calls, 5, "one trial per kept sector");
        assert!(minimise(vec![2, 4], &mut |_| true).is_empty());
    }
}
