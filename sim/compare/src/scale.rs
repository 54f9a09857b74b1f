//! How big `compare`'s scenarios run.

/// How big a scenario runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Scale {
    /// Seconds in a debug build: what `cargo test` snapshots.
    Small,
    /// The size of the findings in docs/DESIGN.md (e.g. 2,000 × 1 MiB for the large database).
    Seed,
}

impl std::str::FromStr for Scale {
    type Err = String;
    fn from_str(s: &str) -> Result<Scale, String> {
        match s {
            "small" => Ok(Scale::Small),
            "seed" => Ok(Scale::Seed),
            _ => Err(format!("expected small or seed, found `{s}`")),
        }
    }
}

/// The size of the template and the number of Sets measured.
#[derive(Clone, Copy, Debug)]
pub struct Size {
    pub values: u64,
    pub value_size: usize,
    pub sets: u64,
}

impl Size {
    pub fn of(scale: Scale) -> Size {
        match scale {
            Scale::Small => Size {
                values: 64,
                value_size: 64 << 10,
                sets: 20,
            },
            Scale::Seed => Size {
                values: 2_000,
                value_size: 1 << 20,
                sets: 100,
            },
        }
    }

    /// Bytes the database once held.
    pub fn largest_ever(&self) -> u64 {
        self.values * self.value_size as u64
    }
}
