//! A group's schedule: which callers' calls share each commit, in commit order — one of the
//! interleavings a coalescer allows, pinned so the crash-state checker can visit each of them
//! (`group callers=3 seed=5 batches=0+2/1`: callers 0 and 2 commit together, then caller 1).
//!
//! Timing decides the schedule in a run. What a coalescer allows is what timing can make: every
//! batch is a nonempty set of callers (a caller has at most one call in flight, since it waits
//! for each answer), at most the coalescer's batch size, and every caller takes part in as many
//! batches as it has calls, its calls in order. A call that fails in its batch is run again
//! alone right after it; that is the coalescer's doing, not the schedule's.

use std::fmt;

/// The batches of a group, first to last, each the callers whose next call it holds (ascending).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Schedule(pub Vec<Vec<u32>>);

/// The schedules [`Schedule::enumerate`] found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Enumerated {
    /// In a fixed order: the first `limit` of them when there are more.
    pub schedules: Vec<Schedule>,
    /// How many there are in all (saturating).
    pub total: u128,
}

impl Enumerated {
    pub fn exhaustive(&self) -> bool {
        self.schedules.len() as u128 == self.total
    }
}

impl Schedule {
    /// Every schedule of `callers` callers making `calls` calls each with batches of at most
    /// `max_batch` calls (0: unbounded): the first `limit`, and how many there are.
    pub fn enumerate(callers: u32, calls: u32, max_batch: u32, limit: usize) -> Enumerated {
        let max_batch = if max_batch == 0 { callers } else { max_batch };
        let left = vec![calls; callers as usize];
        let mut found = Vec::new();
        extend(&left, max_batch, &mut Vec::new(), limit, &mut found);
        let total = count(&left, max_batch, &mut std::collections::BTreeMap::new());
        Enumerated {
            schedules: found,
            total,
        }
    }

    /// Whether this schedule is one a coalescer with batches of at most `max_batch` calls (0:
    /// unbounded) allows for `callers` callers of `calls` calls each; the reason when it is not.
    pub fn fits(&self, callers: u32, calls: u32, max_batch: u32) -> Result<(), String> {
        let mut made = vec![0u32; callers as usize];
        for (i, batch) in self.0.iter().enumerate() {
            if batch.is_empty() {
                return Err(format!("batch {i} is empty"));
            }
            if max_batch != 0 && batch.len() > max_batch as usize {
                return Err(format!(
                    "batch {i} holds {} calls, more than the coalescer's {max_batch}",
                    batch.len()
                ));
            }
            if batch.windows(2).any(|w| w[0] >= w[1]) {
                return Err(format!(
                    "batch {i} must name distinct callers in ascending order"
                ));
            }
            for &c in batch {
                let Some(n) = made.get_mut(c as usize) else {
                    return Err(format!("batch {i} names caller {c} of {callers}"));
                };
                *n += 1;
            }
        }
        match made.iter().position(|&n| n != calls) {
            Some(c) => Err(format!(
                "caller {c} takes part in {} batches, but makes {calls} calls",
                made[c]
            )),
            None => Ok(()),
        }
    }

    /// The callers' call indexes (into a group's calls, caller by caller, `calls` each) of
    /// every batch, in order.
    pub fn call_indexes(&self, calls: u32) -> Vec<Vec<usize>> {
        let mut next = std::collections::BTreeMap::<u32, u32>::new();
        let index = |c: u32, next: &mut std::collections::BTreeMap<u32, u32>| {
            let k = next.entry(c).or_insert(0);
            *k += 1;
            (c * calls + *k - 1) as usize
        };
        self.0
            .iter()
            .map(|b| b.iter().map(|&c| index(c, &mut next)).collect())
            .collect()
    }
}

/// Depth-first: every way to continue `prefix` with `left[c]` calls still to make per caller.
fn extend(
    left: &[u32],
    max_batch: u32,
    prefix: &mut Vec<Vec<u32>>,
    limit: usize,
    found: &mut Vec<Schedule>,
) {
    if found.len() >= limit {
        return;
    }
    let ready: Vec<u32> = (0..left.len() as u32)
        .filter(|&c| left[c as usize] > 0)
        .collect();
    if ready.is_empty() {
        found.push(Schedule(prefix.clone()));
        return;
    }
    // Nonempty subsets of the ready callers, in a fixed order (by bit pattern), small enough.
    for mask in 1u64..(1u64 << ready.len()) {
        if mask.count_ones() > max_batch {
            continue;
        }
        let batch: Vec<u32> = (0..ready.len())
            .filter(|b| mask >> b & 1 == 1)
            .map(|b| ready[b])
            .collect();
        let mut rest = left.to_vec();
        for &c in &batch {
            rest[c as usize] -= 1;
        }
        prefix.push(batch);
        extend(&rest, max_batch, prefix, limit, found);
        prefix.pop();
        if found.len() >= limit {
            return;
        }
    }
}

/// How many schedules continue from `left` (memoised on the multiset of calls left, since
/// callers are interchangeable for counting).
fn count(
    left: &[u32],
    max_batch: u32,
    memo: &mut std::collections::BTreeMap<Vec<u32>, u128>,
) -> u128 {
    let mut key: Vec<u32> = left.iter().copied().filter(|&n| n > 0).collect();
    key.sort_unstable();
    if key.is_empty() {
        return 1;
    }
    if let Some(&n) = memo.get(&key) {
        return n;
    }
    let mut total: u128 = 0;
    for mask in 1u64..(1u64 << key.len()) {
        if mask.count_ones() > max_batch {
            continue;
        }
        let rest: Vec<u32> = key
            .iter()
            .enumerate()
            .map(|(b, &n)| n - u32::from(mask >> b & 1 == 1))
            .collect();
        total = total.saturating_add(count(&rest, max_batch, memo));
    }
    memo.insert(key, total);
    total
}

impl fmt::Display for Schedule {
    /// `0+2/1`: batches separated by `/`, callers within one by `+`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, batch) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str("/")?;
            }
            for (j, c) in batch.iter().enumerate() {
                if j > 0 {
                    f.write_str("+")?;
                }
                write!(f, "{c}")?;
            }
        }
        Ok(())
    }
}

impl std::str::FromStr for Schedule {
    type Err = String;

    fn from_str(s: &str) -> Result<Schedule, String> {
        let batch = |b: &str| -> Result<Vec<u32>, String> {
            b.split('+')
                .map(|c| {
                    c.parse::<u32>()
                        .map_err(|_| format!("`{c}` in schedule `{s}` is not a caller number"))
                })
                .collect()
        };
        s.split('/')
            .map(batch)
            .collect::<Result<_, _>>()
            .map(Schedule)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Ordered set partitions of n callers with one call each: the Fubini numbers.
    #[test]
    fn one_call_each_gives_the_ordered_partitions() {
        for (n, fubini) in [(1, 1u128), (2, 3), (3, 13), (4, 75)] {
            let e = Schedule::enumerate(n, 1, 0, usize::MAX);
            assert_eq!(e.total, fubini, "{n} callers");
            assert_eq!(e.schedules.len() as u128, fubini);
            assert!(e.schedules.iter().all(|s| s.fits(n, 1, 0).is_ok()));
        }
    }

    #[test]
    fn enumeration_is_distinct_bounded_and_respects_the_batch_size() {
        let all = Schedule::enumerate(3, 2, 2, usize::MAX);
        let distinct: std::collections::BTreeSet<_> = all.schedules.iter().collect();
        assert_eq!(distinct.len(), all.schedules.len());
        assert_eq!(all.total, all.schedules.len() as u128);
        assert!(all
            .schedules
            .iter()
            .all(|s| s.0.iter().all(|b| b.len() <= 2)));
        let some = Schedule::enumerate(3, 2, 2, 10);
        assert_eq!(some.schedules, all.schedules[..10]);
        assert_eq!(some.total, all.total);
        assert!(!some.exhaustive());
    }

    #[test]
    fn text_round_trips_and_bad_schedules_are_refused() {
        let s: Schedule = "0+2/1/0+1+2".parse().unwrap();
        assert_eq!(s.0, vec![vec![0, 2], vec![1], vec![0, 1, 2]]);
        assert_eq!(s.to_string(), "0+2/1/0+1+2");
        assert_eq!(s.call_indexes(2), vec![vec![0, 4], vec![2], vec![1, 3, 5]]);
        assert!(s.fits(3, 2, 0).is_ok());
        assert!(s.fits(3, 2, 2).unwrap_err().contains("more than"));
        assert!(s.fits(3, 1, 0).unwrap_err().contains("caller 0"));
        assert!("0+0".parse::<Schedule>().unwrap().fits(1, 2, 0).is_err());
        assert!("3".parse::<Schedule>().unwrap().fits(2, 1, 0).is_err());
        assert!("a".parse::<Schedule>().is_err());
    }
}
