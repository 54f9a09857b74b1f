//! `crashlab`: the command-line front end. The simulator's commands (run, explore, repro,
//! shrink, check, compare) land with the simulator; today the tool describes itself.

use clap::Parser;

/// crashlab: crash-consistency testing and cost accounting for a bbolt-format storage engine.
///
/// The simulator (run, explore, repro, shrink, check, compare) is not built yet. The engine and
/// its tests are: run `cargo test --workspace`.
#[derive(Parser, Debug)]
#[command(name = "crashlab", version, about, long_about)]
struct Cli {}

fn main() {
    let _ = Cli::parse();
    let mut cmd = <Cli as clap::CommandFactory>::command();
    // With no subcommands yet, the useful output is the help text itself.
    let _ = cmd.print_long_help();
}
