//! crashlab-sim: the simulated disk, the runner and the `crashlab` command-line tool.
#![forbid(unsafe_code)]
