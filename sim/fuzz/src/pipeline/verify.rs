//! The write-path oracle: after the commits, reopen and judge.
//!
//! * On a file `check()` called clean, a commit that returned Ok must leave a clean file that
//!   holds exactly the model's contents (before + the writes). When a commit failed, its writes
//!   may or may not have landed: both states are accepted, nothing else.
//! * On a damaged file, it must leave no more problems than before, a file that still opens if
//!   it opened before, every put it acknowledged readable, and every key the tolerant dump read
//!   before (and the commits did not write) still there with its value. When `check()` named a
//!   page reached twice or a reachable free page, the problem count and the keys are judged
//!   outside what that damage puts at risk ([`super::scope`]).
//! * On either, a file that opened for writing before (the input's freelist kind) still does.
//! * One problem a commit causes by design is not counted: when the commits took the last txid,
//!   `check()` reports that no commit can follow (`Problem::txid_exhausted`).

use super::scope::Clear;
use super::{Before, Run, Step};
use crate::edit::unhex;
use crate::model::{self, show, Contents, Path};
use crate::outcome::{Failure, FailureKind};
use crate::plan::Plan;
use crashlab_engine::inspect::{self, hex, Dump, Image};
use crashlab_engine::{Db, Options, Problem};
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
    /// The file clear of the pages at risk, when the damage before calls for a scope.
    clear: Option<Result<Clear, String>>,
    reading: Result<model::Reading, String>,
    /// A writable open with the input's freelist kind (`no_freelist_sync`, so it writes nothing).
    write_reopen: Result<(), String>,
}

impl Run<'_> {
    pub(super) fn verify(&mut self, before: &Before, commits: &Commits) -> Step<()> {
        let mut after = self.after(before)?;
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
        let clear = after
            .clear
            .as_mut()
            .into_iter()
            .flatten()
            .map(|c| &mut c.problems);
        for list in [&mut after.problems, &mut after.check]
            .into_iter()
            .flatten()
            .chain(clear)
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

    fn after(&mut self, before: &Before) -> Step<After> {
        self.stage = "verify-inspect";
        let inspected = Image::open(self.storage.clone()).and_then(|i| {
            let clear = before.scope.as_ref().map(|s| s.clear(&i)).transpose()?;
            Ok((inspect::check(&i)?, inspect::dump(&i)?.0, clear))
        });
        let (problems, dump, clear) = match inspected {
            Ok((p, d, c)) => (Ok(p), Some(d), c.map(Ok)),
            Err(e) => {
                self.note(&e)?;
                let clear = before.scope.as_ref().map(|_| Err(e.to_string()));
                (Err(e.to_string()), None, clear)
            }
        };
        self.stage = "verify-open";
        let mut after = After {
            problems,
            dump,
            clear,
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
            match (&after.problems, &before.scope) {
                (Ok(p), None) if p.len() <= n => {}
                (Ok(p), None) => {
                    let first = p.iter().map(|p| p.to_string()).next().unwrap_or_default();
                    return worse(format!(
                        "{n} problems before, {} after; first: {first}",
                        p.len()
                    ));
                }
                (Ok(_), Some(scope)) => {
                    let was = &scope.clear_before;
                    let clear = after
                        .clear
                        .as_ref()
                        .expect("a scope checks clear of its risk");
                    match clear.as_ref().map(|c| &c.problems) {
                        Ok(now) if now.len() <= scope.clear_allowed() => {}
                        Ok(now) => {
                            let new = now.iter().find(|p| !was.contains(p)).unwrap_or(&now[0]);
                            return worse(format!(
                                "{} problems clear of what {} puts at risk before ({} more at \
                                 it), {} after; first new: {new}",
                                was.len(),
                                scope.describe(),
                                scope.movable,
                                now.len()
                            ));
                        }
                        Err(e) => return worse(format!("after, no check clear of risk: {e}")),
                    }
                    self.counts.bump("verified-scoped");
                }
                (Err(e), _) => return worse(format!("{n} problems before; after, no check: {e}")),
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
        // With damage no commit can see, only what lies clear of it must stay, and it may be
        // found clear of it only.
        let reference = match &before.scope {
            Some(scope) => Some(&scope.safe),
            None => before.dump.as_ref(),
        };
        // With such damage a key may be found where it belongs by the tolerant walk, by the
        // same clear of the pages at risk, or by a get through its own bucket's path (which
        // follows only that bucket's references: the walk may have filed the page that holds
        // it under the bucket a page at risk now points from). Without it, the walk alone.
        let clear = after.clear.as_ref().and_then(|c| c.as_ref().ok());
        let now: Vec<&Dump> = after.dump.iter().chain(clear.map(|c| &c.dump)).collect();
        let get = |bucket: &str, key: &str| match (&before.scope, &after.db) {
            (Some(_), Some(db)) => read_back(db, &dump_path(bucket), &unhex(key))
                .ok()
                .flatten()
                .map(|v| hex(&v)),
            _ => None,
        };
        if let (Some(b), false) = (reference, now.is_empty()) {
            if let Some(why) = lost_keys(b, &now, &commits.touched, get) {
                return Err(Failure::new(
                    FailureKind::CommitLostData,
                    "verify-damaged",
                    why,
                ));
            }
        }
        self.counts.bump("verified-damaged");
        Ok(())
    }
}

/// The first key the dump `before` read that every dump of `after`, and `get` (bucket and key
/// in hex: the value in hex), lost or changed, among those no plan touched.
fn lost_keys(
    before: &Dump,
    after: &[&Dump],
    touched: &BTreeSet<(String, String)>,
    get: impl Fn(&str, &str) -> Option<String>,
) -> Option<String> {
    for (bucket, keys) in &before.buckets {
        for (k, v) in keys {
            if touched.contains(&(bucket.clone(), k.clone())) {
                continue;
            }
            let mut now = after
                .iter()
                .filter_map(|d| d.buckets.get(bucket).and_then(|b| b.get(k)));
            if now.clone().any(|n| n == v) {
                continue;
            }
            let got = get(bucket, k);
            let what = match (now.next(), got) {
                (_, Some(g)) if g == *v => continue,
                (Some(_), _) | (_, Some(_)) => "holds another value",
                (None, None) => "is gone",
            };
            return Some(format!(
                "bucket /{bucket}: key {k}, readable before the commit, {what} after"
            ));
        }
    }
    None
}

/// A dump's bucket name (hex names joined by `/`) as a path.
fn dump_path(bucket: &str) -> Path {
    match bucket {
        "" => Vec::new(),
        b => b.split('/').map(unhex).collect(),
    }
}

fn read_back(db: &Db, path: &Path, key: &[u8]) -> Result<Option<Vec<u8>>, String> {
    let names: Vec<&[u8]> = path.iter().map(Vec::as_slice).collect();
    let r = db.view(|tx| match tx.bucket_path(&names)? {
        Some(b) => b.get(key),
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
