//! When a change of the file's length becomes durable: the disk's durability semantics, one of
//! the two models below (see the fault table in [`super`] for what each models).

use std::fmt;
use std::str::FromStr;

/// Which sync makes a length change durable.
#[derive(
    Clone,
    Copy,
    Debug,
    Default,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    serde::Serialize,
    serde::Deserialize,
)]
pub enum LengthModel {
    /// Every successful sync makes the current length durable with the data (`fsync`, and
    /// `fdatasync` on Linux, which flushes a size change needed to read the data back).
    #[default]
    WithData,
    /// Growth needs its own barrier: a sync makes the length durable only when the previous
    /// storage call was a `set_len` that grew the file (read and `len` calls between do not
    /// count; a write or a non-growing `set_len` does). Any other sync makes durable only the
    /// pending sectors inside the durable length, and a shrink; growth by writing past the end
    /// stays volatile until such a sync. bbolt's growth protocol (`truncate`, then `fsync`,
    /// before using the new pages) is what this model rewards.
    OwnBarrier,
}

impl LengthModel {
    pub const ALL: [LengthModel; 2] = [LengthModel::WithData, LengthModel::OwnBarrier];

    pub fn name(self) -> &'static str {
        match self {
            LengthModel::WithData => "with-data",
            LengthModel::OwnBarrier => "own-barrier",
        }
    }
}

impl fmt::Display for LengthModel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for LengthModel {
    type Err = String;
    fn from_str(s: &str) -> Result<LengthModel, String> {
        LengthModel::ALL
            .into_iter()
            .find(|m| m.name() == s)
            .ok_or_else(|| {
                format!("unknown length model `{s}` (expected with-data or own-barrier)")
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for m in LengthModel::ALL {
            assert_eq!(m.name().parse::<LengthModel>(), Ok(m));
        }
        let e = "fsync".parse::<LengthModel>().unwrap_err();
        assert!(e.contains("expected with-data or own-barrier"), "{e}");
        assert_eq!(LengthModel::default(), LengthModel::WithData);
    }
}
