//! An input, fully concrete: which base, which edits, how to open and write it. Drawn from the
//! campaign seed and the input's index; saved as JSON with a failure; replayed from that JSON
//! without any random draw.

use crate::bases::{Base, BasePool, FIXTURES};
use crate::edit::{apply_all, check_hex, Edit, Op};
use crate::image::FileImage;
use crate::mutate::mutate;
use crate::pipeline::RunConfig;
use crate::rng::FuzzRng;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Spec {
    pub base: Base,
    pub edits: Vec<Edit>,
    pub config: RunConfig,
}

/// Which bases a campaign draws from.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum BaseSet {
    /// Every bbolt fixture (up to 8 MiB) and generated files.
    #[default]
    All,
    /// The fixtures below 512 KiB and generated files: the bounded test's budget.
    Small,
}

/// How a campaign draws its inputs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Draw {
    pub seed: u64,
    pub bases: BaseSet,
    /// Most mutations stacked on one input; 0 runs the bases undamaged (the controls' inputs).
    pub max_mutations: usize,
}

/// Distinct generated bases per campaign: enough variety, few enough to build once per worker.
const GENERATED: u64 = 48;

impl Draw {
    fn base(&self, rng: &mut FuzzRng) -> Base {
        let fixtures: &[&str] = match self.bases {
            BaseSet::All => &FIXTURES,
            BaseSet::Small => &FIXTURES[..3],
        };
        if rng.ratio(2, 5) {
            // Smaller fixtures more often: they run faster and reach the same code.
            let weights: Vec<u64> = (0..fixtures.len() as u64).map(|i| 16 >> i.min(4)).collect();
            let name = fixtures[rng.weighted(&weights)].to_owned();
            Base::Fixture { name }
        } else {
            let k = rng.below(GENERATED);
            Base::Generated {
                seed: FuzzRng::derive(self.seed, k, "base").next_u64(),
            }
        }
    }

    fn mutation_count(&self, rng: &mut FuzzRng) -> usize {
        if self.max_mutations == 0 {
            return 0;
        }
        let n = match rng.weighted(&[4, 40, 28, 18, 10]) {
            4 => rng.range(4, 8) as usize,
            n => n,
        };
        n.min(self.max_mutations)
    }

    /// Input `index`: its spec and the damaged file.
    pub fn input(&self, index: u64, pool: &mut BasePool) -> Result<(Spec, FileImage), String> {
        let mut rng = FuzzRng::derive(self.seed, index, "input");
        let base = self.base(&mut rng);
        let file = pool.get(&base)?;
        let mut image = FileImage::from_bytes(file.bytes.clone());
        let count = self.mutation_count(&mut rng);
        let edits = mutate(file.layout.as_ref(), &mut image, &mut rng, count);
        let config = RunConfig::draw(&mut rng);
        let spec = Spec {
            base,
            edits,
            config,
        };
        Ok((spec, image))
    }
}

impl Spec {
    /// The damaged file this spec describes.
    pub fn image(&self, pool: &mut BasePool) -> Result<FileImage, String> {
        let file = pool.get(&self.base)?;
        let mut image = FileImage::from_bytes(file.bytes.clone());
        apply_all(&mut image, &self.edits);
        Ok(image)
    }
}

/// A failing input as saved: where it came from, what failed, and the input itself.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Saved {
    /// The campaign seed and input index it was drawn as (replay needs neither).
    pub seed: u64,
    pub index: u64,
    /// What a person found out about it (the saved corpus says which defect it shows).
    #[serde(default)]
    pub note: String,
    pub failure: Option<crate::outcome::Failure>,
    /// What the input wrote when it failed (for reading; replay draws or takes them again).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub writes: Vec<crate::plan::PlanText>,
    pub spec: Spec,
}

/// The most bytes a saved input may hold: the corpus's are a few KiB, and minimising only
/// shortens them.
pub const SAVED_INPUT_BYTES_MAX: u64 = 1 << 24;

impl Saved {
    /// The saved input at `path`, or why it is not one: the file (and where serde stopped, or
    /// the line of invalid UTF-8), never reading a FIFO, a device or more than the limit. Its
    /// base must be one of [`FIXTURES`] by name (a name is joined to the fixture directory, so
    /// any other could reach any `.db` file).
    pub fn load(path: &std::path::Path) -> Result<Saved, String> {
        let text = crashlab_sim::input::read_text(path, SAVED_INPUT_BYTES_MAX, "a saved input")
            .map_err(|e| match e.line {
                0 => format!("{}: {}", path.display(), e.message),
                n => format!("{}:{n}: {}", path.display(), e.message),
            })?;
        let saved: Saved =
            serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
        saved
            .spec
            .check()
            .map_err(|e| format!("{}: spec.{e}", path.display()))?;
        Ok(saved)
    }
}

impl Spec {
    /// Why this spec is not one a replay can run as written: a base fixture not among
    /// [`FIXTURES`], hex that is not bytes, or writes the API refuses ([`PlanText::check`]).
    /// Drawn specs always pass; a hand-edited or damaged file may not.
    ///
    /// [`PlanText::check`]: crate::plan::PlanText::check
    pub fn check(&self) -> Result<(), String> {
        if let Base::Fixture { name } = &self.base {
            if !FIXTURES.contains(&name.as_str()) {
                let all = FIXTURES.join(", ");
                return Err(format!("base: fixture `{name}` is not one of {all}"));
            }
        }
        for (i, edit) in self.edits.iter().enumerate() {
            for (j, op) in edit.ops.iter().enumerate() {
                if let Op::Write { hex, .. } = op {
                    check_hex(&format!("edits[{i}].ops[{j}].hex"), hex)?;
                }
            }
        }
        for (n, write) in self.config.writes.iter().flatten().enumerate() {
            write.check(n)?;
        }
        Ok(())
    }
}
