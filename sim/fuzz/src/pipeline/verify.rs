//! The write-path oracle: after the commits, reopen and judge.
//!
//! * On a file `check()` called clean, a commit that returned Ok must leave a clean file that
//!   holds exactly the model's contents (before + the writes). When a commit failed, its writes
//!   may or may not have landed: both states are accepted, nothing else.
//! * On a damaged file, it must leave no more problems than before, a file that still opens if
//!   it opened before, every put it acknowledged readable, and every key the tolerant dump read
//!   before (and the commits did not write) still there with its value. This holds as well when
//!   `check()` named damage a commit does not read (a page reached twice, a live page listed
//!   free, a reference past the high-water mark): the engine's first commit of a session
//!   checks the file and steps around it, or refuses (FORMAT.md §10).
//! * On either, a file that opened for writing before (the input's freelist kind) still does.
//! * One problem a commit causes by design is not counted: when the commits took the last txid,
//!   `check()` reports that no commit can follow (`Problem::txid_exhausted`).

use super::{Before, Run, Step};
use crate::edit::unhex;
use crate::model::{self, show, Contents, Path};
use crate::outcome::{Failure, FailureKind};
use crate::plan::Plan;
use crashlab_engine::{Db, Options, Problem};
use crashlab_format::inspect::{self, hex, Dump, Image};
use std::collections::{BTreeMap, BTreeSet};

/// What the commits of one input acknowledged.
pub(super) struct Commits {
    /// The contents the file may hold now (when the contents before were known).
    accepted: Option<Vec<Contents>>,
    /// Puts acknowledged and not since deleted or put in doubt: (bucket, key) → value.
    required: BTreeMap<(Path, Vec<u8>), Vec<u8>>,
    /// Every key a plan wrote or deleted, acknowledged or not (as dump bucket name → hex key).
    touched: BTreeSet<(String, String)>,
}

impl Commits {
    pub fn new(before: Option<Contents>) -> Commits {
        Commits {
            accepted: before.map(|c| vec![c]),
            required: BTreeMap::new(),
            touched: BTreeSet::new(),
        }
    }

    fn touch(&mut self, plan: &Plan) {
        let names: Vec<String> = plan.path.iter().map(|n| hex(n)).collect();
        let bucket = names.join("/");
        for k in plan.deletes.iter().chain([&plan.key]) {
            self.touched.insert((bucket.clone(), hex(k)));
        }
    }

    /// The contents after the last acknowledged commit, when known.
    pub fn latest(&self) -> Option<&Contents> {
        self.accepted.as_ref().and_then(|a| a.last())
    }

    pub fn committed(&mut self, plan: &Plan) {
        self.touch(plan);
        if let Some(a) = &mut self.accepted {
            let mut next = a.last().expect("one accepted state").clone();
            plan.apply_to(&mut next);
            *a = vec![next];
        }
        for k in &plan.deletes {
            self.required.remove(&(plan.path.clone(), k.clone()));
        }
        let key = (plan.path.clone(), plan.key.clone());
        self.required.insert(key, plan.value.clone());
    }

    /// A commit that returned an error: its writes may or may not be on disk.
    pub fn failed(&mut self, plan: &Plan) {
        self.touch(plan);
        if let Some(a) = &mut self.accepted {
            let mut next = a.last().expect("one accepted state").clone();
            plan.apply_to(&mut next);
            a.push(next);
        }
        for k in plan.deletes.iter().chain([&plan.key]) {
            self.required.remove(&(plan.path.clone(), k.clone()));
        }
    }
}

/// The file after the commits.
struct After {
    /// `inspect::check` (`Err`: why it could not run), less a last-txid problem the commits
    /// caused.
    problems: Result<Vec<Problem>, String>,
    /// What the tolerant dump reads now.
    dump: Option<Dump>,
    db: Option<Db>,
    /// `Db::check` on the read-only reopen, filtered as `problems`.
    check: Result<Vec<Problem>, String>,
    reading: Result<model::Reading, String>,
    /// A writable open with the input's freelist kind (`no_freelist_sync`, so it writes nothing).
    write_reopen: Result<(), String>,
}

impl Run<'_> {
    pub(super) fn verify(&mut self, before: &Before, commits: &Commits) -> Step<()> {
        let mut after = self.after()?;
        self.drop_last_txid_problem(before, &mut after);
        after.write_reopen = self.write_reopen()?;
        if before.write_opened {
            if let Err(why) = &after.write_reopen {
                let kind = match before.clean() {
                    true => FailureKind::CommitCorrupted,
                    false => FailureKind::CommitMadeWorse,
                };
                let why = format!("opened for writing before, not after: {why}");
                return Err(Failure::new(kind, "verify-write-open", why));
            }
        }
        if before.clean() {
            self.verify_clean(&after, commits)
        } else {
            self.verify_damaged(before, &after, commits)
        }
    }

    /// When the commits took the last txid, `check()` says so by design: that problem is the
    /// commits' doing and not damage, so it is not counted (any other problem still is).
    fn drop_last_txid_problem(&mut self, before: &Before, after: &mut After) {
        let Some(meta) = after.db.as_ref().map(Db::meta) else {
            return;
        };
        let took_last = meta.txid_exhausted() && before.txid.is_some_and(|t| t < meta.txid);
        if !took_last {
            return;
        }
        self.counts.bump("took-last-txid");
        let by_design = Problem::txid_exhausted(&meta);
        for list in [&mut after.problems, &mut after.check]
            .into_iter()
            .flatten()
        {
            list.retain(|p| *p != by_design);
        }
    }

    /// Open the file for writing as the input did (its freelist kind), without persisting a
    /// freelist, so the open writes nothing.
    fn write_reopen(&mut self) -> Step<Result<(), String>> {
        self.stage = "verify-write-open";
        let options = Options {
            freelist: self.config.write_freelist,
            no_freelist_sync: true,
            ..Options::default()
        };
        match Db::open(self.storage.clone(), options) {
            Ok(_) => Ok(Ok(())),
            Err(e) => {
                self.note(&e)?;
                Ok(Err(e.to_string()))
            }
        }
    }

    fn after(&mut self) -> Step<After> {
        self.stage = "verify-inspect";
        let inspected = Image::open(self.storage.clone())
            .map_err(crashlab_engine::Error::from)
            .and_then(|i| Ok((Db::check_image(&i)?, inspect::dump(&i)?.0)));
        let (problems, dump) = match inspected {
            Ok((p, d)) => (Ok(p), Some(d)),
            Err(e) => {
                self.note(&e)?;
                (Err(e.to_string()), None)
            }
        };
        self.stage = "verify-open";
        let mut after = After {
            problems,
            dump,
            db: None,
            check: Err("the file does not open".into()),
            reading: Err("the file does not open".into()),
            write_reopen: Ok(()),
        };
        let options = Options {
            read_only: true,
            ..Options::default()
        };
        match Db::open(self.storage.clone(), options) {
            Ok(db) => after.db = Some(db),
            Err(e) => {
                self.note(&e)?;
                let why = format!("the file does not open: {e}");
                after.check = Err(why.clone());
                after.reading = Err(why);
                return Ok(after);
            }
        }
        let db = after.db.as_ref().expect("opened");
        self.stage = "verify-walk";
        after.reading = match model::read(db, &mut self.rng, self.bounds) {
            Ok(r) => {
                self.judge_reading(&r, "verify-walk")?;
                Ok(r)
            }
            Err(e) => {
                self.note(&e)?;
                Err(e.to_string())
            }
        };
        self.stage = "verify-check";
        let check = db.check();
        if let Err(e) = &check {
            self.note(e)?;
        }
        after.check = check.map_err(|e| e.to_string());
        self.counts.bump("reopened");
        Ok(after)
    }

    fn verify_clean(&mut self, after: &After, commits: &Commits) -> Step<()> {
        self.stage = "verify-clean";
        let corrupted = |why: String| {
            Err(Failure::new(
                FailureKind::CommitCorrupted,
                "verify-clean",
                why,
            ))
        };
        match &after.problems {
            Ok(p) if p.is_empty() => {}
            Ok(p) => {
                return corrupted(format!(
                    "inspect check: {} problems, first: {}",
                    p.len(),
                    p[0]
                ))
            }
            Err(e) => return corrupted(format!("the file no longer inspects: {e}")),
        }
        match &after.check {
            Ok(p) if p.is_empty() => {}
            Ok(p) => return corrupted(format!("Db::check: {} problems, first: {}", p.len(), p[0])),
            Err(e) => return corrupted(e.clone()),
        }
        let reading = match &after.reading {
            Ok(r) if r.disagreements.is_empty() && !r.truncated => r,
            Ok(r) => return corrupted(r.disagreements.first().cloned().unwrap_or_default()),
            Err(e) => return corrupted(format!("reading after the commit: {e}")),
        };
        let Some(accepted) = &commits.accepted else {
            return Ok(());
        };
        if accepted.contains(&reading.contents) {
            self.counts.bump("verified-clean");
            return Ok(());
        }
        let why = diff(accepted.last().expect("one state"), &reading.contents);
        Err(Failure::new(
            FailureKind::CommitLostData,
            "verify-clean",
            why,
        ))
    }

    fn verify_damaged(&mut self, before: &Before, after: &After, commits: &Commits) -> Step<()> {
        self.stage = "verify-damaged";
        let worse = |why: String| {
            Err(Failure::new(
                FailureKind::CommitMadeWorse,
                "verify-damaged",
                why,
            ))
        };
        if let Some(n) = before.problems {
            match &after.problems {
                Ok(p) if p.len() <= n => {}
                Ok(p) => {
                    let first = p.iter().map(|p| p.to_string()).next().unwrap_or_default();
                    return worse(format!(
                        "{n} problems before, {} after; first: {first}",
                        p.len()
                    ));
                }
                Err(e) => return worse(format!("{n} problems before; after, no check: {e}")),
            }
        }
        if before.opened && after.db.is_none() {
            let why = after.check.as_ref().err().cloned().unwrap_or_default();
            return worse(format!("opened before, not after: {why}"));
        }
        for ((path, key), value) in &commits.required {
            let got = match &after.db {
                Some(db) => read_back(db, path, key),
                None => continue,
            };
            if got.as_ref().ok() != Some(&Some(value.clone())) {
                let why = format!(
                    "put {}:{} ({} bytes) reads back as {:?}",
                    show(path),
                    hex(key),
                    value.len(),
                    got.map(|v| v.map(|v| v.len()))
                );
                return Err(Failure::new(
                    FailureKind::CommitLostPut,
                    "verify-damaged",
                    why,
                ));
            }
        }
        if let (Some(b), Some(now)) = (&before.dump, &after.dump) {
            let reads = |bucket: &str, key: &str| {
                let db = after.db.as_ref()?;
                let got = read_back(db, &model::path_of(bucket), &unhex(key)).ok()??;
                Some(hex(&got))
            };
            if let Some(why) = lost_keys(b, now, &commits.touched, reads) {
                return Err(Failure::new(
                    FailureKind::CommitLostData,
                    "verify-damaged",
                    why,
                ));
            }
        }
        if before.unseen {
            self.counts.bump("verified-unseen-damage");
        }
        self.counts.bump("verified-damaged");
        Ok(())
    }
}

/// The first key the dump `before` read that the dump `after` lost or changed, among those no
/// plan touched, and that `reads` (the engine, after the commit: bucket and key in hex, the
/// value in hex) does not read unchanged either. The dump shows a page reached twice only at
/// its first visit, and a commit that rewrites a parent can change which path the walk meets a
/// shared page from: the dump then shows its keys under the other bucket (corpus/fuzz/025).
fn lost_keys(
    before: &Dump,
    after: &Dump,
    touched: &BTreeSet<(String, String)>,
    reads: impl Fn(&str, &str) -> Option<String>,
) -> Option<String> {
    for (bucket, keys) in &before.buckets {
        for (k, v) in keys {
            if touched.contains(&(bucket.clone(), k.clone())) {
                continue;
            }
            let what = match after.buckets.get(bucket).and_then(|b| b.get(k)) {
                Some(now) if now == v => continue,
                _ if reads(bucket, k).as_ref() == Some(v) => continue,
                Some(_) => "holds another value",
                None => "is gone",
            };
            return Some(format!(
                "bucket /{bucket}: key {k}, readable before the commit, {what} after"
            ));
        }
    }
    None
}

fn read_back(db: &Db, path: &Path, key: &[u8]) -> Result<Option<Vec<u8>>, String> {
    let names: Vec<&[u8]> = path.iter().map(Vec::as_slice).collect();
    let r = db.view(|tx| match tx.bucket_path(&names)? {
        Some(b) => Ok(b.get(key)?.map(|v| v.to_vec())),
        None => Ok(None),
    });
    r.map_err(|e| e.to_string())
}

/// The first difference between the model and the file.
fn diff(want: &Contents, got: &Contents) -> String {
    for (path, w) in &want.buckets {
        let Some(g) = got.buckets.get(path) else {
            return format!("bucket {} is missing", show(path));
        };
        if w.sequence != g.sequence {
            return format!(
                "bucket {}: sequence {} not {}",
                show(path),
                g.sequence,
                w.sequence
            );
        }
        for (k, v) in &w.values {
            match g.values.get(k) {
                None => return format!("bucket {}: key {} is missing", show(path), hex(k)),
                Some(gv) if gv != v => {
                    return format!(
                        "bucket {}: key {} holds {} bytes, not the {} committed",
                        show(path),
                        hex(k),
                        gv.len(),
                        v.len()
                    )
                }
                Some(_) => {}
            }
        }
        if let Some(k) = g.values.keys().find(|k| !w.values.contains_key(*k)) {
            return format!("bucket {}: key {} should not be there", show(path), hex(k));
        }
    }
    match got.buckets.keys().find(|p| !want.buckets.contains_key(*p)) {
        Some(p) => format!("bucket {} should not be there", show(p)),
        None => "contents differ".into(),
    }
}
