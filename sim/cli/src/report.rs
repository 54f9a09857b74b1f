//! `explore --report FILE.jsonl`: a sweep's results as JSON lines that `crashlab merge` joins.
//!
//! Line 1 is the [`Header`]: what produced the report (crashlab's version and commit, an xxh3
//! hash of the binary) and what it swept (engine, profile, negative control, ops, the seed range, the shard). Every
//! further line is one seed's [`SeedLine`], in ascending seed order. Nothing in a report depends
//! on the wall clock or on `--jobs`, so a shard's report is a function of the binary and the
//! header alone, and the merge of every shard is the report of the unsharded sweep.
//!
//! Hashes are 16 hex digits (strings, since JSON tools read numbers as doubles); seeds are
//! numbers. A reader refuses what it does not understand with `file:line: reason`.

use crashlab_sim::adapter::EngineConfig;
use crashlab_sim::config::RunConfig;
use crashlab_sim::runner::Report;
use crashlab_sim::signature::{signature, Signature};
use crashlab_sim::verdict::Outcome;
use serde::{Deserialize, Serialize};
use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Read as _, Write as _};
use std::path::{Path, PathBuf};

/// The report format this crashlab writes and reads.
pub const FORMAT: u32 = 1;

/// Longest line a reader accepts: a seed line is a few hundred bytes (details are cut to
/// [`DETAIL_CHARS_MAX`]), so a longer one is not a report.
pub const LINE_BYTES_MAX: u64 = 64 << 10;

/// Characters of a violation's or disk failure's detail kept in a seed line (the saved case
/// replays the whole story).
pub const DETAIL_CHARS_MAX: usize = 400;

/// What produced a report and what it swept.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Header {
    pub crashlab_report: u32,
    pub version: String,
    pub commit: String,
    /// xxh3-64 of the running binary's bytes, or "unknown" when it cannot be read.
    pub binary_xxh3: String,
    pub engine: String,
    pub profile: String,
    /// The negative control built as an engine debug hook that was on (`none` for a real sweep):
    /// a control's findings are planted bugs, never to be merged with a real sweep's.
    pub control: String,
    pub ops: usize,
    /// The sweep's whole range `[start, end)`, the same in every shard's report.
    pub seeds: [u64; 2],
    /// `[i, n]`: this report holds the seeds whose offset from `seeds[0]` is `i` modulo `n`.
    /// A merged report says `[0, 1]`: it holds them all.
    pub shard: [u64; 2],
}

impl Header {
    /// The header of a sweep by this binary.
    pub fn new<C: EngineConfig>(
        seeds: std::ops::Range<u64>,
        shard: (u64, u64),
        ops: usize,
        profile: impl ToString,
        control: impl ToString,
    ) -> Header {
        Header {
            crashlab_report: FORMAT,
            version: env!("CARGO_PKG_VERSION").into(),
            commit: env!("CRASHLAB_BUILD_COMMIT").into(),
            binary_xxh3: binary_hash(),
            engine: C::ENGINE.into(),
            profile: profile.to_string(),
            control: control.to_string(),
            ops,
            seeds: [seeds.start, seeds.end],
            shard: [shard.0, shard.1],
        }
    }

    /// How many seeds the whole range holds.
    pub fn range_len(&self) -> u64 {
        self.seeds[1].saturating_sub(self.seeds[0])
    }
}

/// xxh3-64 of the running executable, so reports of different builds do not merge.
fn binary_hash() -> String {
    let bytes = std::env::current_exe().and_then(std::fs::read);
    match bytes {
        Ok(b) => hex(xxhash_rust::xxh3::xxh3_64(&b)),
        Err(_) => "unknown".into(),
    }
}

pub fn hex(h: u64) -> String {
    format!("{h:016x}")
}

/// One seed's result.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SeedLine {
    pub seed: u64,
    /// `ok`, `violation` or `disk-failure`.
    pub outcome: String,
    /// What the violation or disk failure was (cut to `DETAIL_CHARS_MAX` characters).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    pub ops: u64,
    pub commits: u64,
    pub failed_commits: u64,
    pub power_cuts: u64,
    pub reopens: u64,
    pub io_errors: u64,
    /// Faults the disk injected, every kind summed.
    pub faults: u64,
    pub sim_ns: u64,
    pub trace_hash: String,
    pub image_hash: String,
    /// The run's coverage signature (`crashlab_sim::signature`), for the saturation curve.
    pub signature: SignatureHex,
    /// The case saved for a violation, as explore printed it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub case: Option<String>,
}

pub const OUTCOMES: [&str; 3] = ["ok", "violation", "disk-failure"];

/// A signature's components as hex, by dimension (`crashlab_sim::signature::DIMENSIONS`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SignatureHex {
    pub ops: String,
    pub faults: String,
    pub harness: String,
    pub engine: String,
    pub outcome: String,
}

impl SignatureHex {
    fn new(s: Signature) -> SignatureHex {
        let [ops, faults, harness, engine, outcome] = s.components.map(hex);
        SignatureHex {
            ops,
            faults,
            harness,
            engine,
            outcome,
        }
    }

    fn fields(&self) -> [(&'static str, &String); 5] {
        [
            ("signature.ops", &self.ops),
            ("signature.faults", &self.faults),
            ("signature.harness", &self.harness),
            ("signature.engine", &self.engine),
            ("signature.outcome", &self.outcome),
        ]
    }
}

impl SeedLine {
    pub fn new<C: EngineConfig>(cfg: &RunConfig<C>, r: &Report, case: Option<String>) -> SeedLine {
        let (outcome, detail) = match &r.outcome {
            Outcome::Ok => ("ok", None),
            Outcome::Violation(v) => ("violation", Some(v.to_string())),
            Outcome::DiskFailure(m) => ("disk-failure", Some(m.clone())),
        };
        let f = &r.faults;
        let faults = f.read_eio
            + f.write_eio
            + f.sync_eio
            + f.latent_sectors
            + f.bit_flips
            + f.misdirected_writes
            + f.enospc
            + f.lying_syncs
            + f.garbage_sector_reads
            + f.torn_writes_in_crash;
        SeedLine {
            seed: cfg.seed,
            outcome: outcome.into(),
            detail: detail.map(|d| d.chars().take(DETAIL_CHARS_MAX).collect()),
            ops: r.stats.ops_run,
            commits: r.stats.commits,
            failed_commits: r.stats.failed_commits,
            power_cuts: r.stats.crashes,
            reopens: r.stats.reopens,
            io_errors: r.stats.io_errors,
            faults,
            sim_ns: r.io.sim_time_ns,
            trace_hash: hex(r.trace_hash),
            image_hash: hex(r.image_hash),
            signature: SignatureHex::new(signature(cfg, r)),
            case,
        }
    }

    /// The signature (its hex was checked when the line was read).
    pub fn signature_value(&self) -> Signature {
        let parse = |h: &String| u64::from_str_radix(h, 16).expect("checked on reading");
        Signature {
            components: self.signature.fields().map(|(_, h)| parse(h)),
        }
    }

    /// What a line must hold beyond its JSON shape.
    fn check(&self) -> Result<(), String> {
        if !OUTCOMES.contains(&self.outcome.as_str()) {
            return Err(format!(
                "outcome `{}` is none of {}",
                self.outcome,
                OUTCOMES.join(", ")
            ));
        }
        let hashes = [
            ("trace_hash", &self.trace_hash),
            ("image_hash", &self.image_hash),
        ];
        for (name, h) in hashes.into_iter().chain(self.signature.fields()) {
            if h.len() != 16 || !h.bytes().all(|b| b.is_ascii_hexdigit()) {
                return Err(format!("{name} `{h}` is not 16 hex digits"));
            }
        }
        Ok(())
    }
}

/// Writes a report as the sweep goes; the first write error is kept for the end.
pub struct Writer {
    path: PathBuf,
    out: BufWriter<File>,
    error: Option<std::io::Error>,
}

impl Writer {
    /// Create `path` and write `header` to it.
    pub fn create(path: &Path, header: &Header) -> Result<Writer, String> {
        crashlab_sim::input::writable_target(path)?;
        let file = File::create(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let mut w = Writer {
            path: path.to_path_buf(),
            out: BufWriter::new(file),
            error: None,
        };
        w.line(header);
        Ok(w)
    }

    pub fn line(&mut self, value: &impl Serialize) {
        if self.error.is_some() {
            return;
        }
        let mut text = serde_json::to_string(value).expect("report lines serialize");
        text.push('\n');
        if let Err(e) = self.out.write_all(text.as_bytes()) {
            self.error = Some(e);
        }
    }

    /// Flush; the first error of the whole report, if any.
    pub fn finish(mut self) -> Result<(), String> {
        let flushed = self.out.flush();
        match self.error.take().map_or(flushed, Err) {
            Ok(()) => Ok(()),
            Err(e) => Err(format!("cannot write {}: {e}", self.path.display())),
        }
    }
}

/// Reads a report line by line, each error as `file:line: reason`.
pub struct Reader {
    name: String,
    input: BufReader<File>,
    line: u64,
    buf: Vec<u8>,
}

impl Reader {
    /// Open `path` and read its header.
    pub fn open(path: &Path) -> Result<(Reader, Header), String> {
        crashlab_sim::input::regular_file(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let file = File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let mut r = Reader {
            name: path.display().to_string(),
            input: BufReader::new(file),
            line: 0,
            buf: Vec::new(),
        };
        let text = r
            .next_text()?
            .ok_or_else(|| format!("{}:1: empty file: not a crashlab report", r.name))?;
        let header: Header = serde_json::from_str(&text)
            .map_err(|e| r.at(format!("not a crashlab report header: {e}")))?;
        if header.crashlab_report != FORMAT {
            return Err(r.at(format!(
                "report format {}, this crashlab reads format {FORMAT}",
                header.crashlab_report
            )));
        }
        Ok((r, header))
    }

    /// `file:line` of the line last read.
    pub fn position(&self) -> String {
        format!("{}:{}", self.name, self.line)
    }

    /// `file:line: message` at the line last read.
    pub fn at(&self, message: impl std::fmt::Display) -> String {
        format!("{}: {message}", self.position())
    }

    /// The next seed line, or `None` at the end of the file.
    pub fn next_seed(&mut self) -> Result<Option<SeedLine>, String> {
        let Some(text) = self.next_text()? else {
            return Ok(None);
        };
        let line: SeedLine =
            serde_json::from_str(&text).map_err(|e| self.at(format!("not a seed line: {e}")))?;
        line.check().map_err(|m| self.at(m))?;
        Ok(Some(line))
    }

    /// The next line's text, at most `LINE_BYTES_MAX` bytes.
    fn next_text(&mut self) -> Result<Option<String>, String> {
        self.buf.clear();
        self.line += 1;
        let read = (&mut self.input)
            .take(LINE_BYTES_MAX + 1)
            .read_until(b'\n', &mut self.buf)
            .map_err(|e| self.at(e))?;
        if read == 0 {
            return Ok(None);
        }
        if self.buf.last() != Some(&b'\n') {
            if read as u64 > LINE_BYTES_MAX {
                return Err(self.at(format!(
                    "a line longer than {LINE_BYTES_MAX} bytes (LINE_BYTES_MAX)"
                )));
            }
            return Err(self.at("the last line has no newline: the report was cut short"));
        }
        self.buf.pop();
        String::from_utf8(std::mem::take(&mut self.buf))
            .map(Some)
            .map_err(|_| self.at("not UTF-8"))
    }
}
