//! One input through everything that reads or writes a file, with the oracles:
//!
//! 1. `inspect`: what `crashlab db` runs — open the image, `check`, `stats`, the page map, a
//!    full dump, a few single pages (one past the end).
//! 2. `read`: a read-only open (the input's freelist kind), every bucket walked both ways and
//!    probed with get and seek, `check()`.
//! 3. `write`: a writable open (freelist kind, `no_freelist_sync` from the input) and one or
//!    two commits of a put and some deletes.
//! 4. `verify`: reopen, `check()`, read everything again, and judge the commits.
//!
//! Oracles: no panic (the whole run is under `catch_unwind`); every error is a world error
//! that names a page of the file ([`judge_error`]); a cursor ends; on a file `check()` calls
//! clean every read succeeds and agrees with itself and with the dump; a commit that returned
//! Ok on a clean file leaves a clean file holding exactly the model's data; one on a damaged
//! file leaves no more problems than before, its put readable and every other key it read
//! before unchanged. A file that opened before, read-only or for writing, opens so after. The memory cap and the deadline are enforced around this, by the worker's allocator
//! and the parent's watchdog.

mod verify;

use crate::image::FileImage;
use crate::model::{self, Contents, ReadBounds, Reading};
use crate::outcome::{judge_error, Counts, Failure, FailureKind, Outcome};
use crate::plan::{Plan, PlanText};
use crate::rng::FuzzRng;
use crate::storage::{Control, FuzzStorage};
use crashlab_engine::{Db, Error, FreelistKind, Options, PageId, Problem, Storage, TxId};
use crashlab_format::inspect::{self, Dump, Image};
use crashlab_format::page::PAGE_SIZE_MIN;
use serde::{Deserialize, Serialize};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

/// How an input opens and writes its file (drawn with the mutations, stored with them).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunConfig {
    pub read_freelist: FreelistKind,
    pub write_freelist: FreelistKind,
    pub no_freelist_sync: bool,
    /// Seeds the probes and the write plans.
    pub plan_seed: u64,
    /// Commits to make (each a put and some deletes).
    pub commits: u8,
    /// Exact writes, one plan per commit, instead of drawn ones (hand-written inputs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub writes: Option<Vec<PlanText>>,
}

impl RunConfig {
    pub fn draw(rng: &mut FuzzRng) -> RunConfig {
        let kinds = [FreelistKind::Array, FreelistKind::Hashmap];
        RunConfig {
            read_freelist: *rng.pick(&kinds),
            write_freelist: *rng.pick(&kinds),
            no_freelist_sync: rng.ratio(1, 3),
            plan_seed: rng.next_u64(),
            commits: 1 + rng.below(2) as u8,
            writes: None,
        }
    }
}

/// The state before the writes, as the read-only paths saw it.
#[derive(Default)]
struct Before {
    /// `inspect::check`'s problem count (`None`: the file could not be inspected).
    problems: Option<usize>,
    /// `check` named damage a commit cannot see by itself (FORMAT.md §10), which the engine's
    /// first commit of a session must step around.
    unseen: bool,
    dump: Option<Dump>,
    /// The read-only open worked.
    opened: bool,
    /// The txid of the meta the read-only open chose.
    txid: Option<TxId>,
    /// The writable open (the input's options) worked.
    write_opened: bool,
    /// Everything read through cursors, when the walk completed without error.
    contents: Option<Contents>,
    page_size: u32,
}

impl Before {
    fn clean(&self) -> bool {
        self.problems == Some(0)
    }
}

struct Run<'c> {
    storage: Arc<FuzzStorage>,
    /// The writes made so far, for the failure report.
    writes: Vec<PlanText>,
    config: &'c RunConfig,
    counts: Counts,
    stage: &'static str,
    /// The most pages the file can have (it grows with the commits): an error naming a page
    /// past this is wrong.
    pages: u64,
    bounds: ReadBounds,
    rng: FuzzRng,
}

type Step<T> = std::result::Result<T, Failure>;

/// Run `image` through the pipeline. `hog_bytes` is what the memory-hog control allocates.
pub fn run(image: FileImage, config: &RunConfig, control: Control, hog_bytes: usize) -> Outcome {
    let mut counts = Counts::default();
    counts.bump("inputs");
    if image.is_sparse() {
        counts.bump("sparse");
    }
    let mut r = Run {
        pages: image.len() / u64::from(PAGE_SIZE_MIN),
        bounds: ReadBounds::for_bytes(image.real_bytes()),
        storage: FuzzStorage::new(image, control, hog_bytes),
        writes: Vec::new(),
        config,
        counts,
        stage: "start",
        rng: FuzzRng::new(config.plan_seed),
    };
    let result = crate::panics::capturing(|| catch_unwind(AssertUnwindSafe(|| r.stages())));
    let failure = match result {
        Ok(Ok(())) => None,
        Ok(Err(f)) => Some(f),
        Err(payload) => Some(Failure::new(
            FailureKind::Panic,
            r.stage,
            crate::panics::message(&*payload),
        )),
    };
    if let Some(f) = &failure {
        r.counts.bump(&format!("failure:{}", f.kind.name()));
    }
    let writes = if failure.is_some() {
        r.writes
    } else {
        Vec::new()
    };
    Outcome {
        counts: r.counts,
        failure,
        writes,
    }
}

impl Run<'_> {
    fn stages(&mut self) -> Step<()> {
        let mut before = self.inspect()?;
        self.read_only(&mut before)?;
        self.write_and_verify(&mut before)
    }

    /// Count `e` and fail when it breaks an oracle. A commit can grow the file: `e` may name
    /// any page of the file as it is now (corpus/fuzz/026).
    fn note(&mut self, e: &Error) -> Step<()> {
        let now = self
            .storage
            .len()
            .map_or(0, |len| len / u64::from(PAGE_SIZE_MIN));
        self.pages = self.pages.max(now);
        match judge_error(e, self.stage, self.pages, &mut self.counts) {
            Some(f) => Err(f),
            None => Ok(()),
        }
    }

    /// `Some(v)` for `Ok(v)`; `None` for an error that breaks no oracle.
    fn ok<T>(&mut self, r: crashlab_engine::Result<T>) -> Step<Option<T>> {
        match r {
            Ok(v) => Ok(Some(v)),
            Err(e) => self.note(&e).map(|()| None),
        }
    }

    fn open(&mut self, options: Options) -> Step<Option<Db>> {
        let r = Db::open(self.storage.clone(), options);
        self.ok(r)
    }

    fn inspect(&mut self) -> Step<Before> {
        let mut before = Before::default();
        self.stage = "inspect-open";
        let image = Image::open(self.storage.clone()).map_err(Error::from);
        let Some(image) = self.ok(image)? else {
            return Ok(before);
        };
        self.counts.bump("inspect-opened");
        before.page_size = image.page_size();
        self.stage = "inspect-check";
        let problems = Db::check_image(&image);
        let problems = self.ok(problems)?;
        before.problems = problems.as_ref().map(Vec::len);
        before.unseen = problems.iter().flatten().any(unseen_by_a_commit);
        match before.problems {
            Some(0) => self.counts.bump("inspect-clean"),
            Some(_) => self.counts.bump("inspect-damaged"),
            None => {}
        }
        self.stage = "inspect-stats";
        let stats = inspect::stats(&image).map_err(Error::from);
        self.ok(stats)?;
        self.stage = "inspect-pages";
        let map = inspect::page_map(&image).map_err(Error::from);
        self.ok(map)?;
        self.stage = "inspect-dump";
        let dump = inspect::dump(&image).map_err(Error::from);
        before.dump = self.ok(dump)?.map(|(d, _)| d);
        self.stage = "inspect-page";
        let file_pages = image.file_pages();
        let mut ids = vec![0, 1, file_pages];
        for _ in 0..3 {
            ids.push(self.rng.below(file_pages.max(1)));
        }
        for id in ids {
            match inspect::page_detail(&image, PageId(id)).map_err(Error::from) {
                Ok(_) => {}
                // Asked for a page past the end: naming it is the answer, not a wrong page.
                Err(e) if id >= file_pages => self
                    .counts
                    .bump(&format!("error:{}", crate::outcome::error_kind(&e))),
                Err(e) => self.note(&e)?,
            }
        }
        Ok(before)
    }

    fn read_only(&mut self, before: &mut Before) -> Step<()> {
        self.stage = "read-open";
        let options = Options {
            read_only: true,
            freelist: self.config.read_freelist,
            ..Options::default()
        };
        let Some(db) = self.open(options)? else {
            return self.clean_read_failed(before, "the read-only open failed");
        };
        before.opened = true;
        before.txid = Some(db.meta().txid);
        before.page_size = db.page_size();
        self.counts.bump("read-opened");
        self.stage = "read-walk";
        let reading = model::read(&db, &mut self.rng, self.bounds);
        let reading = self.ok(reading)?;
        self.stage = "read-check";
        let check = db.check();
        let check = self.ok(check)?;
        drop(db);
        if let Some(r) = &reading {
            self.judge_reading(r, "read-walk")?;
        }
        if before.clean() {
            self.judge_clean_read(before, reading.as_ref(), check.as_deref())?;
        }
        before.contents = reading.filter(|r| !r.truncated).map(|r| r.contents);
        Ok(())
    }

    /// A cursor that runs away fails wherever it happens; other disagreements only count
    /// (a damaged file may disagree with itself) unless the file is clean.
    fn judge_reading(&mut self, r: &Reading, stage: &'static str) -> Step<()> {
        self.counts.bump(&format!("{stage}-done"));
        if r.runaway {
            let detail = format!("a cursor returned more than {} items", self.bounds.runaway);
            return Err(Failure::new(FailureKind::CursorRunaway, stage, detail));
        }
        if !r.disagreements.is_empty() {
            self.counts.bump(&format!("{stage}-disagreed"));
        }
        Ok(())
    }

    fn clean_read_failed(&mut self, before: &Before, why: &str) -> Step<()> {
        if !before.clean() {
            return Ok(());
        }
        let detail = format!("inspect check found no problem, yet {why}");
        Err(Failure::new(
            FailureKind::CleanReadFailed,
            self.stage,
            detail,
        ))
    }

    fn judge_clean_read(
        &mut self,
        before: &Before,
        reading: Option<&Reading>,
        check: Option<&[Problem]>,
    ) -> Step<()> {
        self.stage = "read-clean";
        let Some(reading) = reading else {
            return self.clean_read_failed(before, "walking the buckets failed");
        };
        match check {
            None => return self.clean_read_failed(before, "Db::check failed"),
            Some([first, ..]) => {
                let why = format!("Db::check reports {first}");
                return self.clean_read_failed(before, &why);
            }
            Some([]) => {}
        }
        if let Some(d) = reading.disagreements.first() {
            return self.clean_read_failed(before, d);
        }
        if reading.truncated {
            return self.clean_read_failed(before, "its buckets outnumber its bytes");
        }
        let from_cursors = reading.contents.to_dump(before.page_size);
        if before.dump.as_ref() != Some(&from_cursors) {
            return self.clean_read_failed(before, "the dump and the cursors disagree");
        }
        self.counts.bump("read-clean-agreed");
        Ok(())
    }

    fn write_and_verify(&mut self, before: &mut Before) -> Step<()> {
        self.stage = "write-open";
        let options = Options {
            freelist: self.config.write_freelist,
            no_freelist_sync: self.config.no_freelist_sync,
            ..Options::default()
        };
        let Some(db) = self.open(options)? else {
            return Ok(());
        };
        before.write_opened = true;
        self.counts.bump("write-opened");
        let known = before
            .contents
            .clone()
            .or_else(|| before.dump.as_ref().map(Contents::from_dump));
        let mut commits = verify::Commits::new(before.contents.clone());
        let given = self.config.writes.clone();
        let count = given
            .as_ref()
            .map_or(usize::from(self.config.commits), Vec::len);
        for c in 0..count {
            let plan = match &given {
                Some(plans) => Plan::from(&plans[c]),
                None => {
                    let contents = commits.latest().or(known.as_ref());
                    Plan::draw(contents, &mut self.rng, db.page_size())
                }
            };
            self.writes.push(PlanText::from(&plan));
            if !self.commit(&db, &plan, &mut commits, before)? {
                break;
            }
        }
        drop(db);
        self.verify(before, &commits)
    }

    /// One write transaction; `Ok(false)` when it did not commit (the database may be latched).
    fn commit(
        &mut self,
        db: &Db,
        plan: &Plan,
        commits: &mut verify::Commits,
        before: &Before,
    ) -> Step<bool> {
        self.stage = "write-begin";
        let Some(mut tx) = self.ok(db.begin_write())? else {
            return Ok(false);
        };
        self.stage = "write-ops";
        match plan.run(&mut tx) {
            Ok(true) => {}
            Ok(false) => {
                self.counts.bump("plan-bucket-missing");
                return Ok(false);
            }
            Err(e) => {
                self.note(&e)?;
                return Ok(false);
            }
        }
        self.stage = "commit";
        self.counts.bump("commit-attempted");
        match tx.commit() {
            Ok(()) => {
                self.counts.bump("commit-ok");
                let on = if before.clean() { "clean" } else { "damaged" };
                self.counts.bump(&format!("commit-ok-{on}"));
                commits.committed(plan);
                Ok(true)
            }
            Err(e) => {
                self.counts.bump("commit-refused");
                self.note(&e)?;
                commits.failed(plan);
                Ok(false)
            }
        }
    }
}

/// Whether `p` is damage FORMAT.md §10 says a commit does not read: a page reached twice, a
/// live page listed free, a reference past the high-water mark.
fn unseen_by_a_commit(p: &crashlab_engine::Problem) -> bool {
    use crashlab_engine::ProblemKind as K;
    match p.kind {
        K::ReachedTwice | K::ReachableFree | K::BeyondHighWater { .. } => true,
        K::TxIdExhausted | K::Other => false,
    }
}
