//! A pinned power cut: what one power cut of a run keeps of each pending sector, written down so
//! that `crashlab shrink` can save a minimal crash state and `crashlab repro` replay exactly it.
//!
//! ```text
//! power-cut = cut=3 keep=16,17 torn=25@40..512   # the run's 3rd power cut
//! power-cut = cut=1 keep=none                     # ... keeping no pending sector
//! ```
//! `keep` are the pending sectors kept whole, `torn` the ones kept with bytes `a..b` old (a
//! sub-sector tear), every other pending sector is lost. The sectors are disk sector indexes,
//! written as the crash-state checker's `crash-state = call=N keep=...` writes them: one way to
//! name the sectors of a crash state. A pinned cut still draws from the disk's fault stream
//! what the seeded cut would, so every later fault of the run lands where it did.
//!
//! A directory engine's cut is the file system's ([`DirPin`]): which pending metadata
//! operations it kept (their indexes in the pending list) and, per file (its number in the
//! file system, from 0), what it kept of that file's pending sectors; a file not named lost
//! them all.
//! ```text
//! power-cut = cut=2 meta=0,1 file=0 keep=3,4 file=2 keep=0 torn=1@8..64
//! power-cut = cut=1 meta=none                     # no operation and no sector kept
//! ```

use super::sectors::Keep;
use crate::words::{num, pairs};
use std::collections::BTreeMap;
use std::fmt;
use std::ops::Range;
use std::str::FromStr;

/// What one power cut keeps of the pending sectors (any not named is lost).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CrashPin {
    /// Kept whole, ascending.
    pub keep: Vec<u64>,
    /// Kept torn: the sector and the bytes of it that keep their old content, ascending.
    pub torn: Vec<(u64, Range<usize>)>,
}

impl CrashPin {
    /// The sectors that survived in any form, ascending.
    pub fn survivors(&self) -> Vec<u64> {
        let mut all: Vec<u64> = self.keep.clone();
        all.extend(self.torn.iter().map(|(s, _)| *s));
        all.sort_unstable();
        all
    }

    /// What the disk does with each pending sector under this pin.
    pub(crate) fn decisions(&self) -> BTreeMap<u64, Keep> {
        let mut d: BTreeMap<u64, Keep> = self.keep.iter().map(|&s| (s, Keep::Whole)).collect();
        for (s, old) in &self.torn {
            d.insert(*s, Keep::Torn(old.clone()));
        }
        d
    }

    /// This pin without sector `s`: it is lost instead.
    pub fn without(&self, s: u64) -> CrashPin {
        CrashPin {
            keep: self.keep.iter().copied().filter(|&k| k != s).collect(),
            torn: self.torn.iter().filter(|(t, _)| *t != s).cloned().collect(),
        }
    }

    /// This pin with torn sector `s` kept whole instead.
    pub fn untorn(&self, s: u64) -> CrashPin {
        let mut p = self.without(s);
        p.keep.push(s);
        p.keep.sort_unstable();
        p
    }

    /// In words: `sectors 16 and 17 survived, sector 24 was lost, sector 25 torn at byte 40`
    /// (`lost`: the pending sectors the cut lost).
    pub fn describe(&self, lost: &[u64]) -> String {
        let mut parts = Vec::new();
        if !self.keep.is_empty() {
            parts.push(format!("{} survived", sectors_words(&self.keep)));
        }
        if !lost.is_empty() {
            let verb = if lost.len() == 1 { "was" } else { "were" };
            parts.push(format!("{} {verb} lost", sectors_words(lost)));
        }
        for (s, old) in &self.torn {
            parts.push(format!("sector {s} torn {}", tear_words(old)));
        }
        if parts.is_empty() {
            return "no sector was pending".into();
        }
        parts.join(", ")
    }
}

/// `sector 3`, `sectors 3 and 5`, `sectors 3, 5 and 9`, `sectors 3–9` for a run of more than two.
fn sectors_words(s: &[u64]) -> String {
    let mut runs: Vec<String> = Vec::new();
    let mut i = 0;
    while i < s.len() {
        let mut j = i;
        while j + 1 < s.len() && s[j + 1] == s[j] + 1 {
            j += 1;
        }
        match j - i {
            0 => runs.push(s[i].to_string()),
            1 => runs.extend([s[i].to_string(), s[j].to_string()]),
            _ => runs.push(format!("{}–{}", s[i], s[j])),
        }
        i = j + 1;
    }
    let noun = if s.len() == 1 { "sector" } else { "sectors" };
    match runs.split_last() {
        Some((last, [])) => format!("{noun} {last}"),
        Some((last, rest)) => format!("{noun} {} and {last}", rest.join(", ")),
        None => "no sector".into(),
    }
}

fn tear_words(old: &Range<usize>) -> String {
    format!("(bytes {}..{} old, the rest new)", old.start, old.end)
}

fn list_text(s: &[u64]) -> String {
    if s.is_empty() {
        return "none".into();
    }
    s.iter().map(u64::to_string).collect::<Vec<_>>().join(",")
}

/// What a file system's power cut keeps: of the pending metadata operations, and of each
/// file's pending sectors.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DirPin {
    /// The pending metadata operations kept, by index, ascending. A set the file system's model
    /// does not allow is narrowed to one it does (see `SimFs::crash_pinned`).
    pub meta: Vec<usize>,
    /// Per file (its number in the file system): what it keeps. A file not named keeps nothing.
    pub files: BTreeMap<u64, CrashPin>,
}

impl DirPin {
    /// In words: `metadata operations 0 and 1 kept; file 0: sector 3 survived, ...`.
    pub fn describe(&self, pending_meta: usize, lost: &BTreeMap<u64, Vec<u64>>) -> String {
        let kept = match self.meta.as_slice() {
            [] => "none".to_string(),
            m => m.iter().map(usize::to_string).collect::<Vec<_>>().join(","),
        };
        let mut parts = vec![format!(
            "metadata operations kept: {kept} (of {pending_meta} pending)"
        )];
        let files: std::collections::BTreeSet<u64> =
            self.files.keys().chain(lost.keys()).copied().collect();
        for f in files {
            let pin = self.files.get(&f).cloned().unwrap_or_default();
            let l = lost.get(&f).map_or(&[][..], Vec::as_slice);
            parts.push(format!("file {f}: {}", pin.describe(l)));
        }
        parts.join("; ")
    }
}

/// A run's pinned power cut: its number among the run's power cuts (from 1) and what it keeps:
/// `pin` of the one disk, or `dir` of a file system (then `pin` is empty).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PinnedCut {
    pub cut: u64,
    pub pin: CrashPin,
    pub dir: Option<DirPin>,
}

fn write_pin(f: &mut fmt::Formatter<'_>, pin: &CrashPin) -> fmt::Result {
    write!(f, " keep={}", list_text(&pin.keep))?;
    if !pin.torn.is_empty() {
        let torn: Vec<String> = pin
            .torn
            .iter()
            .map(|(s, r)| format!("{s}@{}..{}", r.start, r.end))
            .collect();
        write!(f, " torn={}", torn.join(","))?;
    }
    Ok(())
}

impl fmt::Display for PinnedCut {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "cut={}", self.cut)?;
        let Some(dir) = &self.dir else {
            return write_pin(f, &self.pin);
        };
        let meta: Vec<u64> = dir.meta.iter().map(|&m| m as u64).collect();
        write!(f, " meta={}", list_text(&meta))?;
        for (file, pin) in &dir.files {
            write!(f, " file={file}")?;
            write_pin(f, pin)?;
        }
        Ok(())
    }
}

fn parse_tear(w: &str) -> Result<(u64, Range<usize>), String> {
    let bad = || format!("expected `SECTOR@A..B` (bytes A..B old) in `torn`, found `{w}`");
    let (s, range) = w.split_once('@').ok_or_else(bad)?;
    let (a, b) = range.split_once("..").ok_or_else(bad)?;
    let (a, b): (usize, usize) = (num("torn", a)?, num("torn", b)?);
    if a >= b {
        return Err(format!("torn sector {s}: bytes {a}..{b} are empty"));
    }
    Ok((num("torn", s)?, a..b))
}

/// Sort a parsed pin; a sector both kept and torn is an error.
fn settle(pin: &mut CrashPin) -> Result<(), String> {
    pin.keep.sort_unstable();
    pin.keep.dedup();
    pin.torn.sort_by_key(|(s, _)| *s);
    if let Some(s) = pin.survivors().windows(2).find(|w| w[0] == w[1]) {
        return Err(format!("sector {} is both kept and torn", s[0]));
    }
    Ok(())
}

fn list<T: FromStr>(k: &str, v: &str) -> Result<Vec<T>, String> {
    if v == "none" {
        return Ok(Vec::new());
    }
    v.split(',').map(|w| num(k, w)).collect()
}

impl FromStr for PinnedCut {
    type Err = String;
    fn from_str(s: &str) -> Result<PinnedCut, String> {
        let (mut cut, mut pin) = (None, CrashPin::default());
        let mut dir: Option<DirPin> = None;
        // In a directory's cut, `keep` and `torn` belong to the last `file=N`.
        let mut file: Option<u64> = None;
        for (k, v) in pairs(s)? {
            let target = match (&mut dir, file) {
                (Some(d), Some(f)) => d.files.entry(f).or_default(),
                (Some(_), None) if matches!(k, "keep" | "torn") => {
                    return Err(format!(
                        "in a directory's cut, `{k}` follows a `file=N` (found `{k}={v}` first)"
                    ))
                }
                _ => &mut pin,
            };
            match k {
                "cut" => cut = Some(num::<u64>(k, v)?),
                "keep" => target.keep = list(k, v)?,
                "torn" => target.torn = v.split(',').map(parse_tear).collect::<Result<_, _>>()?,
                "meta" if dir.is_some() => return Err("`meta` given twice".into()),
                "meta" if !pin.keep.is_empty() || !pin.torn.is_empty() => {
                    return Err("`meta` (a directory's cut) after a disk's `keep`".into())
                }
                "meta" => {
                    let mut meta: Vec<usize> = list(k, v)?;
                    meta.sort_unstable();
                    meta.dedup();
                    dir = Some(DirPin {
                        meta,
                        files: BTreeMap::new(),
                    });
                }
                "file" if dir.is_none() => {
                    return Err("`file=N` belongs to a directory's cut: `meta=...` first".into())
                }
                "file" => {
                    let f = num::<u64>(k, v)?;
                    if dir.as_ref().is_some_and(|d| d.files.contains_key(&f)) {
                        return Err(format!("file {f} named twice"));
                    }
                    file = Some(f);
                }
                _ => {
                    return Err(format!(
                        "unknown power-cut word `{k}` (expected cut, keep, torn, meta, file)"
                    ))
                }
            }
        }
        let cut = cut.filter(|&c| c >= 1).ok_or_else(|| {
            format!(
                "expected `cut=N keep=S,..|none [torn=S@A..B,..]` or `cut=N meta=M,..|none \
                 [file=F keep=.. torn=..]..` with N ≥ 1, found `{s}`"
            )
        })?;
        if let (Some(d), Some(f)) = (&mut dir, file) {
            d.files.entry(f).or_default();
        }
        settle(&mut pin)?;
        for p in dir.iter_mut().flat_map(|d| d.files.values_mut()) {
            settle(p)?;
        }
        Ok(PinnedCut { cut, pin, dir })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pinned_cut_round_trips_and_reads_as_words() {
        let p: PinnedCut = "cut=3 keep=17,16 torn=25@40..512".parse().unwrap();
        assert_eq!(p.cut, 3);
        assert_eq!(p.pin.keep, vec![16, 17]);
        assert_eq!(p.to_string(), "cut=3 keep=16,17 torn=25@40..512");
        assert_eq!(p.to_string().parse::<PinnedCut>(), Ok(p.clone()));
        assert_eq!(
            p.pin.describe(&[24]),
            "sectors 16 and 17 survived, sector 24 was lost, sector 25 torn (bytes 40..512 old, the rest new)"
        );
        assert_eq!(
            CrashPin::default().describe(&[1, 2, 3, 7]),
            "sectors 1–3 and 7 were lost"
        );
        let d: PinnedCut = "cut=2 meta=1,0 file=0 keep=4,3 file=2 keep=none torn=1@8..64"
            .parse()
            .unwrap();
        let dir = d.dir.clone().unwrap();
        assert_eq!(dir.meta, vec![0, 1]);
        assert_eq!(dir.files[&0].keep, vec![3, 4]);
        assert_eq!(dir.files[&2].torn, vec![(1, 8..64)]);
        assert_eq!(
            d.to_string(),
            "cut=2 meta=0,1 file=0 keep=3,4 file=2 keep=none torn=1@8..64"
        );
        assert_eq!(d.to_string().parse::<PinnedCut>(), Ok(d.clone()));
        let none: PinnedCut = "cut=1 keep=none".parse().unwrap();
        assert!(none.pin.survivors().is_empty());
        for (bad, needle) in [
            ("keep=1", "with N ≥ 1"),
            ("cut=0 keep=1", "with N ≥ 1"),
            ("cut=1 keep=1 torn=1@8..16", "both kept and torn"),
            ("cut=1 torn=2@16..8", "are empty"),
            ("cut=1 torn=2", "SECTOR@A..B"),
            ("cut=1 colour=red", "unknown power-cut word"),
            ("cut=1 meta=0 keep=1", "follows a `file=N`"),
            ("cut=1 file=0 keep=1", "`meta=...` first"),
            ("cut=1 meta=0 file=0 file=0", "named twice"),
            ("cut=1 meta=x", "not a valid value for `meta`"),
        ] {
            let e = bad.parse::<PinnedCut>().unwrap_err();
            assert!(e.contains(needle), "{bad}: {e}");
        }
    }
}
