//! What a check case names beyond a runner case: the checker's parameters (`check = ...`) and,
//! for a saved violation, the one crash state that shows it (`crash-state = ...`).
//!
//! ```text
//! check = batched=false control=none sector_size=64 length=own-barrier max_states=4096
//! crash-state = call=17 keep=3,5,9                              # power cut after call 17
//! crash-state = call=17 keep=none                               # ... keeping no pending sector
//! crash-state = call=17 keep=3 recovery-call=4 recovery-keep=1  # and again during recovery
//! crash-state = call=17 process-crash                           # the page cache survives
//! crash-state = call=17 reader=0                                # open reader 0 reads its snapshot
//! crash-state = live op=12                                      # the recorded run itself failed
//! ```
//! Calls count the recorded run's writes and syncs from 1; sectors are disk sector indexes.

use crate::adapter::EngineConfig;
use crate::control::Control;
use crate::disk::LengthModel;
use crate::limits::{at_most, STATES_PER_CRASH_POINT_MAX};
use crate::words::{flag, num, settings};
use std::fmt;
use std::str::FromStr;

/// Most states enumerated per crash point by default: 2^12, so a crash point with up to 12
/// effective pending sectors is enumerated exhaustively.
pub const MAX_STATES_DEFAULT: u64 = 1 << 12;

// The default is within what a user may ask for.
const _: () = assert!(MAX_STATES_DEFAULT <= crate::limits::STATES_PER_CRASH_POINT_MAX);

/// The checker's sector size unless a case or `--sector-size` says otherwise: 64 bytes, so the
/// 80-byte meta at the start of its page spans two sectors and a power cut can tear it (at 512
/// bytes it is atomic, and the meta's two slots and checksum would go untested).
pub const CHECK_SECTOR_SIZE_DEFAULT: u32 = 64;

/// Smallest and largest sector sizes the checker accepts: below 16 bytes a page header is torn
/// field by field for no new insight; above 4096 a sector holds several 512-byte pages.
pub const SECTOR_SIZE_RANGE: (u32, u32) = (16, 4096);

/// How a workload is checked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CheckParams {
    /// Commit through `Db::write` of `WriteBatch`es (or `Db::batch`), not `Db::update`.
    pub batched: bool,
    pub control: Control,
    /// The disk's atomic unit, in bytes.
    pub sector_size: u32,
    /// When the disk makes a length change durable; a control that needs a length model
    /// ([`Control::length_model`]) overrides it (see [`CheckParams::disk_length`]).
    pub length: LengthModel,
    /// Most states enumerated per crash point before the checker samples.
    pub max_states: u64,
}

impl Default for CheckParams {
    fn default() -> CheckParams {
        CheckParams {
            batched: false,
            control: Control::None,
            sector_size: CHECK_SECTOR_SIZE_DEFAULT,
            length: LengthModel::WithData,
            max_states: MAX_STATES_DEFAULT,
        }
    }
}

impl fmt::Display for CheckParams {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "batched={} control={} sector_size={} length={} max_states={}",
            self.batched,
            self.control,
            self.sector_size,
            self.disk_length(),
            self.max_states
        )
    }
}

impl CheckParams {
    /// These parameters with `control`, on the length model it needs if it needs one.
    pub fn with_control(self, control: Control) -> CheckParams {
        CheckParams {
            control,
            length: control.length_model().unwrap_or(self.length),
            ..self
        }
    }

    /// The length model of the checked disk: the control's, if it needs one, else `length`.
    pub fn disk_length(&self) -> LengthModel {
        self.control.length_model().unwrap_or(self.length)
    }

    /// `Err` when the control needs another length model than `length`.
    fn length_fits_control(&self) -> Result<(), String> {
        match self.control.length_model() {
            Some(needed) if needed != self.length => Err(format!(
                "control {} runs on an {needed} disk, not length={}",
                self.control, self.length
            )),
            _ => Ok(()),
        }
    }

    /// Why an engine of configuration `cfg` cannot be checked like this, if it cannot.
    pub fn supported_by<C: EngineConfig>(&self, cfg: &C) -> Result<(), String> {
        self.length_fits_control()?;
        if self.batched && !cfg.capabilities().write_batches {
            return Err(format!(
                "batched commits (--batched) need write batches; {} has none",
                C::ENGINE
            ));
        }
        cfg.with_control(self.control).map(drop)
    }
}

/// Check a sector size: a power of two in [`SECTOR_SIZE_RANGE`].
pub fn sector_size_valid(ss: u32) -> Result<u32, String> {
    let (lo, hi) = SECTOR_SIZE_RANGE;
    if ss.is_power_of_two() && (lo..=hi).contains(&ss) {
        Ok(ss)
    } else {
        Err(format!(
            "sector size {ss} is not a power of two in [{lo}, {hi}]"
        ))
    }
}

/// Check a per-crash-point state bound: at least 2 (nothing and everything kept), at most
/// [`STATES_PER_CRASH_POINT_MAX`].
pub fn max_states_valid(n: u64) -> Result<u64, String> {
    if n < 2 {
        return Err(format!("max_states {n}: at least 2"));
    }
    at_most(
        "max_states",
        n,
        STATES_PER_CRASH_POINT_MAX,
        "STATES_PER_CRASH_POINT_MAX",
    )
}

impl FromStr for CheckParams {
    type Err = String;
    fn from_str(s: &str) -> Result<CheckParams, String> {
        let mut p = CheckParams::default();
        let mut length = None;
        for (k, v) in settings(s)? {
            match k {
                "batched" => p.batched = flag(k, v)?,
                "control" => p.control = v.parse()?,
                "sector_size" => p.sector_size = sector_size_valid(num(k, v)?)?,
                "length" => length = Some(v.parse::<LengthModel>()?),
                "max_states" => p.max_states = num(k, v)?,
                _ => {
                    return Err(format!(
                        "unknown check parameter `{k}` (expected batched, control, sector_size, length or max_states)"
                    ))
                }
            }
        }
        p.max_states = max_states_valid(p.max_states)?;
        // Without `length=`, the disk of today's case files, unless the control names its own.
        p.length = length
            .or(p.control.length_model())
            .unwrap_or(LengthModel::WithData);
        p.length_fits_control()?;
        Ok(p)
    }
}

/// One crash state: where the power was cut and what survived (see the module docs).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CrashState {
    /// A power cut after storage call `call` keeping exactly the pending sectors `keep`; with
    /// `recovery`, a second power cut during the recovery of that image, after the recovery's
    /// own call `.0`, keeping `.1`.
    PowerCut {
        call: u64,
        keep: Vec<u64>,
        recovery: Option<(u64, Vec<u64>)>,
    },
    /// A process crash after call `call`: everything written survives in the page cache.
    ProcessCrash { call: u64 },
    /// Open reader `reader` (by position) reads its snapshot at call `call`.
    Reader { call: u64, reader: usize },
    /// The recorded run itself failed, during operation `op`.
    Live { op: usize },
}

fn sectors_text(keep: &[u64]) -> String {
    if keep.is_empty() {
        return "none".into();
    }
    let words: Vec<String> = keep.iter().map(u64::to_string).collect();
    words.join(",")
}

fn parse_sectors(k: &str, v: &str) -> Result<Vec<u64>, String> {
    if v == "none" {
        return Ok(Vec::new());
    }
    v.split(',').map(|s| num(k, s)).collect()
}

impl fmt::Display for CrashState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CrashState::PowerCut {
                call,
                keep,
                recovery,
            } => {
                write!(f, "call={call} keep={}", sectors_text(keep))?;
                if let Some((rcall, rkeep)) = recovery {
                    write!(
                        f,
                        " recovery-call={rcall} recovery-keep={}",
                        sectors_text(rkeep)
                    )?;
                }
                Ok(())
            }
            CrashState::ProcessCrash { call } => write!(f, "call={call} process-crash"),
            CrashState::Reader { call, reader } => write!(f, "call={call} reader={reader}"),
            CrashState::Live { op } => write!(f, "live op={op}"),
        }
    }
}

const CRASH_STATE_USAGE: &str =
    "expected `call=N keep=S,..|none [recovery-call=N recovery-keep=S,..|none]`, \
     `call=N process-crash`, `call=N reader=N` or `live op=N`";

impl FromStr for CrashState {
    type Err = String;
    fn from_str(s: &str) -> Result<CrashState, String> {
        let words: Vec<&str> = s.split_whitespace().collect();
        let value = |w: &str, k: &str| w.strip_prefix(k)?.strip_prefix('=').map(str::to_string);
        let bad = || format!("{CRASH_STATE_USAGE}, found `{s}`");
        match words.as_slice() {
            ["live", op] => Ok(CrashState::Live {
                op: num("op", &value(op, "op").ok_or_else(bad)?)?,
            }),
            [call, rest @ ..] => {
                let call = num("call", &value(call, "call").ok_or_else(bad)?)?;
                match rest {
                    ["process-crash"] => Ok(CrashState::ProcessCrash { call }),
                    [r] if r.starts_with("reader=") => Ok(CrashState::Reader {
                        call,
                        reader: num("reader", &value(r, "reader").ok_or_else(bad)?)?,
                    }),
                    [keep] => Ok(CrashState::PowerCut {
                        call,
                        keep: parse_sectors("keep", &value(keep, "keep").ok_or_else(bad)?)?,
                        recovery: None,
                    }),
                    [keep, rcall, rkeep] => Ok(CrashState::PowerCut {
                        call,
                        keep: parse_sectors("keep", &value(keep, "keep").ok_or_else(bad)?)?,
                        recovery: Some((
                            num(
                                "recovery-call",
                                &value(rcall, "recovery-call").ok_or_else(bad)?,
                            )?,
                            parse_sectors(
                                "recovery-keep",
                                &value(rkeep, "recovery-keep").ok_or_else(bad)?,
                            )?,
                        )),
                    }),
                    _ => Err(bad()),
                }
            }
            [] => Err(bad()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crash_states_and_params_round_trip_through_text() {
        let states = [
            CrashState::PowerCut {
                call: 17,
                keep: vec![3, 5, 9],
                recovery: None,
            },
            CrashState::PowerCut {
                call: 2,
                keep: vec![],
                recovery: Some((4, vec![1])),
            },
            CrashState::ProcessCrash { call: 8 },
            CrashState::Reader { call: 9, reader: 1 },
            CrashState::Live { op: 12 },
        ];
        for s in states {
            assert_eq!(s.to_string().parse::<CrashState>(), Ok(s.clone()), "{s}");
        }
        let p = CheckParams {
            batched: true,
            control: Control::MetaSameSlot,
            sector_size: 64,
            length: LengthModel::OwnBarrier,
            max_states: 100,
        };
        assert_eq!(p.to_string().parse::<CheckParams>(), Ok(p));
        // A line without `length=` (every case saved before it existed) is today's disk, unless
        // its control names another.
        let old: CheckParams = "control=none sector_size=512".parse().unwrap();
        assert_eq!((old.length, old.sector_size), (LengthModel::WithData, 512));
        let d: CheckParams = "control=no-growth-sync".parse().unwrap();
        assert_eq!(d.length, LengthModel::OwnBarrier);
        assert_eq!(CheckParams::default().sector_size, 64);
        assert_eq!(
            CheckParams::default()
                .with_control(Control::FdatasyncDisk)
                .length,
            LengthModel::OwnBarrier
        );
    }

    #[test]
    fn malformed_text_says_what_was_expected() {
        let e = "call=x keep=1".parse::<CrashState>().unwrap_err();
        assert!(e.contains("not a valid value for `call`"), "{e}");
        let e = "call=1 keep=1 recovery-call=2"
            .parse::<CrashState>()
            .unwrap_err();
        assert!(e.contains("expected `call=N keep="), "{e}");
        let e = "sector_size=100".parse::<CheckParams>().unwrap_err();
        assert!(e.contains("power of two"), "{e}");
        let e = "max_states=1".parse::<CheckParams>().unwrap_err();
        assert!(e.contains("at least 2"), "{e}");
        let e = "max_states=18446744073709551615"
            .parse::<CheckParams>()
            .unwrap_err();
        assert!(
            e.contains("more than the limit of 1048576 (STATES_PER_CRASH_POINT_MAX)"),
            "{e}"
        );
        let e = "control=chaos".parse::<CheckParams>().unwrap_err();
        assert!(e.contains("expected one of"), "{e}");
        let e = "length=fsync".parse::<CheckParams>().unwrap_err();
        assert!(e.contains("expected with-data or own-barrier"), "{e}");
        let e = "control=fdatasync-disk length=with-data"
            .parse::<CheckParams>()
            .unwrap_err();
        assert!(e.contains("runs on an own-barrier disk"), "{e}");
    }
}
