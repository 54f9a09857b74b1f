//! Regression 017, found by mutating the corpus's case files and handing each mutant to
//! `crashlab repro`, `shrink` and `check` (a scratch script; 750 mutants, one exited 101).
//!
//! Postmortem: the mutant had turned `scan b/y` into `scan #/y`. A case file's `#` starts a
//! comment, so the op line read `scan`, and `crashlab shrink` panicked with an index out of
//! bounds instead of exiting 2 with the file and line. `Op::from_str` checked the word count of
//! `create`, `delete-bucket`, `scan` and `next-seq` with `want(2, ..).and(Ok(..))`: `and` takes
//! its argument already built, so the path was read from `words[1]` before the count was
//! looked at. Every other operation returned on a wrong count before it read a word. The
//! fix checks the count first for those four too; `op_tests.rs` now holds `Op::from_str` to
//! never panicking on any line made of operation names and operand-like words, and
//! `case_tests.rs` holds `Case::parse` to it on any mutation of a valid case. The shrunk
//! mutant's exit code from `repro`, `shrink` and `check` is tested with the binary, in
//! `sim/cli/tests/inputs.rs`.

use crashlab_engine::Options;
use crashlab_sim::case::Case;
use crashlab_sim::op::{Op, OP_NAMES};

/// Every operation that takes operands: those whose name alone is not an operation.
fn taking_operands() -> Vec<&'static str> {
    let names: Vec<&str> = OP_NAMES
        .into_iter()
        .filter(|name| name.parse::<Op>().is_err())
        .collect();
    assert_eq!(names.len(), 12, "the operations with operands: {names:?}");
    names
}

fn case_with(op_line: &str) -> String {
    format!("seed = 1\nprofile = none\n[ops]\ncreate b\n{op_line}\ncommit\n")
}

#[test]
fn an_operation_without_its_operands_is_an_error_naming_its_line() {
    // The comment after each is how the fuzzer's mutant came to lose its path.
    for op in taking_operands() {
        for line in [op.to_string(), format!("{op} #/y")] {
            let text = case_with(&line);
            let parsed = std::panic::catch_unwind(|| Case::<Options>::parse(&text, "bare.case"));
            let Ok(parsed) = parsed else {
                panic!("parsing `{line}` panicked");
            };
            let err = match parsed {
                Ok(_) => panic!("`{line}` parsed as an operation"),
                Err(e) => e.to_string(),
            };
            assert!(err.starts_with("bare.case:5: "), "`{line}`: {err}");
            assert!(err.contains("expected `"), "`{line}` names no usage: {err}");
        }
    }
}
