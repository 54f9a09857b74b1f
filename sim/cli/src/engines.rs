//! The engines the command line knows, and the one place it picks one: every command below the
//! entry point is generic over the adapter trait, called through [`with_engine`].

use crashlab_redb::RedbDb;
use crashlab_sim::adapter::Engine;
use crashlab_sim::crashlab::CrashlabDb;
use crashlab_sqlite::SqliteDb;

/// The engines' names, as `--engine` and case files spell them.
pub const NAMES: [&str; 3] = ["crashlab", "redb", "sqlite"];

/// A command to run with the engine a name picks.
pub trait WithEngine {
    type Output;
    fn call<E: Engine>(self) -> Self::Output;
}

/// Run `f` with the engine `name` names.
pub fn with_engine<F: WithEngine>(name: &str, f: F) -> Result<F::Output, String> {
    match name {
        "crashlab" => Ok(f.call::<CrashlabDb>()),
        "redb" => Ok(f.call::<RedbDb>()),
        "sqlite" => Ok(f.call::<SqliteDb>()),
        other => Err(unknown(other)),
    }
}

fn unknown(name: &str) -> String {
    format!(
        "unknown engine `{name}` (expected one of: {})",
        NAMES.join(", ")
    )
}

/// `--engine`'s value parser: a known engine's name.
pub fn parse(name: &str) -> Result<String, String> {
    if NAMES.contains(&name) {
        Ok(name.to_string())
    } else {
        Err(unknown(name))
    }
}
