//! Case files on the command line: read one, pick the engine it names, parse it for that
//! engine, and say whether its replay ended as expected.

use crate::engines::WithEngine;
use crate::{bad_input, engine_or_exit};
use crashlab_sim::adapter::EngineConfig;
use crashlab_sim::case::{self, Case, Expect};
use std::path::Path;
use std::process::ExitCode;

/// Read a case file and run the command `make` builds from its text, with the engine it names.
pub fn with_case<F: WithEngine<Output = ExitCode>>(
    file: &Path,
    make: impl FnOnce(String) -> F,
) -> ExitCode {
    let text = match case::read(file) {
        Ok(t) => t,
        Err(e) => return bad_input(e),
    };
    let (engine, line) = case::engine_name(&text);
    match crate::engines::parse(&engine) {
        Ok(engine) => engine_or_exit(&engine, make(text)),
        Err(m) => bad_input(format!("{}:{line}: {m}", file.display())),
    }
}

/// Parse a case of engine configuration `C`, or print why not.
pub fn parse_case<C: EngineConfig>(text: &str, file: &Path) -> Result<Case<C>, ExitCode> {
    Case::parse(text, &file.display().to_string()).map_err(bad_input)
}

/// Whether a replay (`what`: the run, the state) ended as its case expects.
pub fn print_expectation(expected: Expect, got: Expect, what: &str) {
    if got == expected {
        println!("as expected ({got:?})");
    } else {
        println!("NOT as expected: the case expects {expected:?}, the {what} gave {got:?}");
    }
}
