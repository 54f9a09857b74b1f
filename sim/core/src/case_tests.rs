//! Unit tests of `case.rs` (kept apart so the module reads at once).

use super::*;
use crate::limits::{CHECK_OPS_MAX, OPS_MAX, PUT_BYTES_PER_CASE_MAX};
use crashlab_engine::{Options, PresizePolicy};

type Case = super::Case<Options>;
type RunConfig = crate::config::RunConfig<Options>;

#[test]
fn a_case_round_trips_with_and_without_explicit_ops() {
    for explicit_ops in [false, true] {
        let case = Case {
            run: RunConfig::from_seed(5, 40, Profile::Default),
            expect: Expect::Violation,
            explicit_ops,
            check: None,
            crash_state: None,
        };
        let back = Case::parse(&case.to_text(), "t.case").unwrap();
        assert_eq!(back, case);
    }
}

/// A check case with its parameters and a crash state, its engine pre-sizing by growth.
fn check_case() -> Case {
    let mut run = RunConfig::from_seed(5, 20, Profile::None);
    run.engine.presize = PresizePolicy::Grow;
    Case {
        run,
        expect: Expect::Violation,
        explicit_ops: true,
        check: Some(
            "batched=true control=no-barrier sector_size=64"
                .parse()
                .unwrap(),
        ),
        crash_state: Some("call=9 keep=1,3".parse().unwrap()),
    }
}

#[test]
fn a_check_case_round_trips_with_its_parameters_and_crash_state() {
    let case = check_case();
    let text = case.to_text();
    assert!(text.contains("presize=grow"), "{text}");
    assert_eq!(Case::parse(&text, "t.case").unwrap(), case);
    let bad = text.replace("keep=1,3", "keep=one");
    let e = Case::parse(&bad, "t.case").unwrap_err();
    let line = bad
        .lines()
        .position(|l| l.starts_with("crash-state"))
        .unwrap()
        + 1;
    assert_eq!(e.line, line, "{e}");
    assert!(e.message.contains("not a valid value for `keep`"), "{e}");
}

/// The merge strategy is written only when it is `Rebuild`, and the batch limit only when it is
/// not the engine's default: a case saved before either was drawn replays as it ran.
#[test]
fn the_merge_strategy_and_batch_limit_round_trip_and_default_to_the_engines() {
    use crashlab_engine::batch::MergeStrategy;
    let mut case = check_case();
    for strategy in [MergeStrategy::Append, MergeStrategy::Rebuild] {
        case.run.engine.merge_strategy = strategy;
        let text = case.to_text();
        let named = text.contains(" merge=rebuild");
        assert_eq!(named, strategy == MergeStrategy::Rebuild, "{text}");
        assert!(!text.contains("merge=append"), "{text}");
        assert_eq!(Case::parse(&text, "t.case").unwrap(), case);
    }
    case.run.engine.max_batch_size = 3;
    let text = case.to_text();
    assert!(text.contains(" max_batch=3"), "{text}");
    assert_eq!(Case::parse(&text, "t.case").unwrap(), case);
    for (bad, why) in [
        ("max_batch=0", "a batch holds at least one call"),
        (
            "max_batch=65537",
            "more than the limit of 65536 (MAX_BATCH_MAX)",
        ),
    ] {
        let e = Case::parse(&text.replace("max_batch=3", bad), "t.case").unwrap_err();
        assert!(e.message.contains(why), "{e}");
    }
    let bad = case.to_text().replace("merge=rebuild", "merge=sorted");
    let e = Case::parse(&bad, "t.case").unwrap_err();
    assert!(
        bad.lines().nth(e.line - 1).unwrap().starts_with("options"),
        "{e}"
    );
    assert!(
        e.message.contains("expected append or rebuild for `merge`"),
        "{e}"
    );
}

#[test]
fn the_disk_line_names_the_sector_size_and_length_model_and_defaults_to_todays_disk() {
    let text = "seed = 3\nops = 5\nfaults = sub_sector_tear=0.25\ndisk = sector_size=128 length=own-barrier\n";
    let case = Case::parse(text, "d.case").unwrap();
    let d = &case.run.disk;
    assert_eq!((d.sector_size, d.length), (128, LengthModel::OwnBarrier));
    assert_eq!(d.faults.sub_sector_tear, 0.25);
    let text = case.to_text();
    assert!(
        text.contains("disk = sector_size=128 length=own-barrier\n"),
        "{text}"
    );
    assert!(text.contains("sub_sector_tear=0.25"), "{text}");
    assert_eq!(Case::parse(&text, "d.case").unwrap(), case);

    // Without the line: 512 B, with-data, whatever the seed would draw today.
    for seed in 0..32 {
        let text = format!("seed = {seed}\nops = 5\nfaults = read_eio=0\n");
        let d = Case::parse(&text, "old.case").unwrap().run.disk;
        assert_eq!((d.sector_size, d.length), (512, LengthModel::WithData));
        assert_eq!(d.faults.sub_sector_tear, 0.0);
    }
    // The no-growth-sync profile's disk is own-barrier whether or not the line says so.
    let d = Case::parse("seed = 1\nops = 5\nprofile = no-growth-sync\n", "g.case")
        .unwrap()
        .run
        .disk;
    assert_eq!(d.length, LengthModel::OwnBarrier);

    for (line, needle) in [
        ("disk = sector_size=100", "not a power of two in [16, 4096]"),
        (
            "disk = sector_size=8192",
            "not a power of two in [16, 4096]",
        ),
        ("disk = length=fsync", "expected with-data or own-barrier"),
        ("disk = colour=red", "unknown disk setting `colour`"),
        (
            "profile = no-growth-sync\ndisk = length=with-data",
            "runs on an own-barrier disk",
        ),
    ] {
        let text = format!("seed = 1\nops = 5\n{line}\n");
        let e = Case::parse(&text, "x.case").unwrap_err();
        assert_eq!(e.line, text.lines().count(), "{line}: {e}");
        assert!(e.message.contains(needle), "{line}: {e}");
    }
}

#[test]
fn an_fs_line_is_refused_for_an_engine_of_one_file() {
    let text = "seed = 1\nops = 5\nfs = model=strict\n";
    let e = Case::parse(text, "one.case").unwrap_err();
    assert_eq!(e.line, 3);
    assert!(e.message.contains("keeps one file"), "{e}");
    // Its case never writes one.
    let case = Case {
        run: RunConfig::from_seed(1, 5, Profile::Default),
        expect: Expect::Ok,
        explicit_ops: false,
        check: None,
        crash_state: None,
    };
    assert!(!case.to_text().contains("fs ="), "{}", case.to_text());
}

#[test]
fn seeds_parse_as_decimal_or_commit_hash() {
    assert_eq!(parse_seed("42"), Ok(42));
    assert_eq!(
        parse_seed("00000000000000ff0123456789abcdef01234567"),
        Ok(255)
    );
    assert!(parse_seed("-1")
        .unwrap_err()
        .contains("decimal u64 or 40-hex"));
}

#[test]
fn malformed_files_name_the_line_and_what_was_expected() {
    let e = Case::parse("seed = 1\nops = 5\nbogus\n", "x.case").unwrap_err();
    assert_eq!((e.file.as_str(), e.line), ("x.case", 3));
    assert!(e.message.contains("expected `key = value`"), "{e}");
    let e = Case::parse("seed = 1\n[ops]\ncreate a\nput a k\n", "x.case").unwrap_err();
    assert_eq!(e.line, 4);
    assert!(
        e.to_string()
            .starts_with("x.case:4: expected `put PATH KEY"),
        "{e}"
    );
    let e = Case::parse("seed = x\nops = 1\n", "x.case").unwrap_err();
    assert_eq!(e.line, 1);
    let e = Case::parse("seed = 1\nops = 1\nfaults = read_eio=2\n", "x.case").unwrap_err();
    assert!(e.message.contains("not a probability"), "{e}");
    let e = Case::parse("seed = 1\nops = 1\ncolour = red\n", "x.case").unwrap_err();
    assert!(e.message.contains("unknown key `colour`"), "{e}");
    let e = Case::parse("seed = 1\n", "x.case").unwrap_err();
    assert!(e.message.contains("expected `ops = N`"), "{e}");
}

/// A key or a setting given twice is refused at the second, naming the first: the parser
/// read the first and silently ignored the second, so a hand-edited case ran something other
/// than what its last line said.
#[test]
fn a_key_or_setting_given_twice_is_refused() {
    let e = Case::parse("seed = 1\nops = 300\n# more\nops = 5\n", "x.case").unwrap_err();
    assert_eq!((e.file.as_str(), e.line), ("x.case", 4));
    assert!(
        e.message.contains("`ops` is given twice (first on line 2)"),
        "{e}"
    );
    let e = Case::parse("seed = 1\nseed = 1\nops = 1\n", "x.case").unwrap_err();
    assert_eq!(e.line, 2);
    let text = "seed = 1\nops = 1\nfaults = read_eio=0.1 write_eio=0 read_eio=0.2\n";
    let e = Case::parse(text, "x.case").unwrap_err();
    assert_eq!(e.line, 3);
    assert!(e.message.contains("`read_eio` is given twice"), "{e}");
    let e = Case::parse(
        "seed = 1\nops = 1\ndisk = sector_size=64 sector_size=64\n",
        "x.case",
    );
    assert!(e
        .unwrap_err()
        .message
        .contains("`sector_size` is given twice"));
}

/// The issue-15 examples: each count or length past its limit is an error at its line that
/// names the limit, found while parsing (before anything is generated or allocated).
#[test]
fn counts_and_lengths_past_their_limits_name_the_line_and_the_limit() {
    let cases: [(&str, usize, &str); 9] = [
        (
            "seed = 1\nops = 100000000\n",
            2,
            "limit of 100000 operations (OPS_MAX)",
        ),
        (
            "seed = 1\nops = 18446744073709551615\n",
            2,
            "limit of 100000 operations (OPS_MAX)",
        ),
        ("seed = 1\nops = 0\n", 2, "at least 1 operation"),
        (
            "seed = 1\n[ops]\ncreate a\nput a k len=4294967295 v=1\n",
            4,
            "len 4294967295 is more than the limit of 16777216 (PUT_LEN_MAX)",
        ),
        (
            "seed = 1\ncheck = sector_size=512\ncrash-state = live op=4294967295\nops = 5\n",
            3,
            "live op=4294967295 is past the workload's last operation (5 ops",
        ),
        (
            "seed = 1\ncheck = max_states=4096\nops = 1001\n",
            3,
            "limit of 1000 operations (CHECK_OPS_MAX)",
        ),
        (
            "seed = 1\nops = 1\noptions = page_cache_pages=99999999\n",
            3,
            "limit of 65536 (PAGE_CACHE_PAGES_MAX)",
        ),
        (
            "seed = 1\nops = 1\nfaults = enospc=18446744073709551615\n",
            3,
            "(ENOSPC_CAPACITY_MAX)",
        ),
        (
            "seed = 1\n[ops]\npower-cut-in 4294967295\n",
            3,
            "limit of 1048576 (POWER_CUT_IN_CALLS_MAX)",
        ),
    ];
    for (text, line, needle) in cases {
        let e = Case::parse(text, "x.case").unwrap_err();
        assert_eq!(e.line, line, "{text}: {e}");
        assert!(e.message.contains(needle), "{text}: {e}");
        assert!(
            e.to_string().starts_with(&format!("x.case:{line}: ")),
            "{e}"
        );
    }
}

#[test]
fn a_listed_workload_is_bounded_in_operations_and_in_bytes() {
    let mut text = String::from("seed = 1\n[ops]\n");
    text.push_str(&"commit\n".repeat(OPS_MAX));
    assert_eq!(Case::parse(&text, "x.case").unwrap().run.ops.len(), OPS_MAX);
    text.push_str("commit\n");
    let e = Case::parse(&text, "x.case").unwrap_err();
    assert_eq!(e.line, OPS_MAX + 3, "{e}");
    assert!(
        e.message
            .contains("operation 100001 is more than the limit"),
        "{e}"
    );

    let put = format!("put a k len={} v=1\n", crate::limits::PUT_LEN_MAX);
    let puts = (PUT_BYTES_PER_CASE_MAX / u64::from(crate::limits::PUT_LEN_MAX)) as usize;
    let text = format!("seed = 1\n[ops]\ncreate a\n{}", put.repeat(puts + 1));
    let e = Case::parse(&text, "x.case").unwrap_err();
    assert_eq!(e.line, 4 + puts, "{e}");
    assert!(e.message.contains("(PUT_BYTES_PER_CASE_MAX)"), "{e}");

    // `check --case` holds any case to the checker's limit; a runner case is not.
    let text = "seed = 1\n[ops]\n".to_string() + &"commit\n".repeat(CHECK_OPS_MAX + 1);
    assert!(Case::parse(&text, "x.case").is_ok());
    let e = Case::parse_with(&text, "x.case", true).unwrap_err();
    assert_eq!(e.line, CHECK_OPS_MAX + 3, "{e}");
    assert!(e.message.contains("(CHECK_OPS_MAX)"), "{e}");
}

#[test]
fn the_sessions_line_round_trips_and_is_absent_for_one_configuration() {
    let text = "seed = 5\nsessions = switch\n[ops]\ncreate a\n";
    let case = Case::parse(text, "x.case").unwrap();
    assert!(case.run.switch_settings);
    let again = Case::parse(&case.to_text(), "y.case").unwrap();
    assert!(again.run.switch_settings);
    let same = Case::parse("seed = 5\n[ops]\ncreate a\n", "x.case").unwrap();
    assert!(!same.run.switch_settings);
    assert!(!same.to_text().contains("sessions"), "{}", same.to_text());
    let e = Case::parse("seed = 5\nsessions = maybe\n[ops]\ncreate a\n", "x.case").unwrap_err();
    assert_eq!(e.line, 2, "{e}");
    assert!(e.message.contains("expected `same` or `switch`"), "{e}");
}

#[test]
fn names_and_paths_are_held_to_the_engine_limits() {
    let key = "k".repeat(crate::limits::NAME_LEN_MAX + 1);
    let e = Case::parse(&format!("seed = 1\n[ops]\nget a {key}\n"), "x.case").unwrap_err();
    assert_eq!(e.line, 3);
    assert!(e.message.contains("(NAME_LEN_MAX)"), "{e}");
    // One byte past the engine's key limit is a name a case may hold: the engine refuses it,
    // as the model does.
    let past = &key[1..];
    assert_eq!(past.len(), crashlab_models::KEY_LEN_MAX + 1);
    let text = format!("seed = 1\n[ops]\ncreate a\nput a {past} len=1 v=1\ncreate {past}\n");
    assert!(Case::parse(&text, "x.case").is_ok());
    let path = vec!["b"; crate::limits::PATH_DEPTH_MAX + 1].join("/");
    let e = Case::parse(&format!("seed = 1\n[ops]\ncreate {path}\n"), "x.case").unwrap_err();
    assert!(e.message.contains("(PATH_DEPTH_MAX)"), "{e}");
    // Non-ASCII after `0x` is refused, not sliced mid-character.
    let e = Case::parse("seed = 1\n[ops]\nget a 0x1\u{e9}1\n", "x.case").unwrap_err();
    assert!(e.message.contains("not valid hex"), "{e}");
}

/// Any mutation of a valid case file parses or is refused naming a line of it, and never
/// panics (regression 017: a mutant whose op line lost its path to a `#` panicked the parser).
mod any_mutation {
    use super::*;
    use proptest::prelude::*;
    use proptest::sample::Index;

    /// A default-profile case listing its operations, and a check case with its parameters
    /// and crash state: between them, every kind of line a case file holds.
    fn bases() -> [String; 2] {
        let listed = Case {
            run: RunConfig::from_seed(5, 60, Profile::Default),
            expect: Expect::Ok,
            explicit_ops: true,
            check: None,
            crash_state: None,
        };
        [listed.to_text(), check_case().to_text()]
    }

    /// What an edit inserts: the characters that separate a case file's words and numbers.
    const INSERTED: [char; 14] = [
        '#', '=', ' ', '/', '\n', '0', '9', 'x', 'é', '\0', '+', '-', '.', ',',
    ];

    #[derive(Clone, Debug)]
    enum Edit {
        Remove(Index),
        Insert(Index, usize),
        Truncate(Index),
        DuplicateLine(Index),
    }

    fn edit() -> impl Strategy<Value = Edit> {
        prop_oneof![
            any::<Index>().prop_map(Edit::Remove),
            (any::<Index>(), 0..INSERTED.len()).prop_map(|(at, c)| Edit::Insert(at, c)),
            any::<Index>().prop_map(Edit::Truncate),
            any::<Index>().prop_map(Edit::DuplicateLine),
        ]
    }

    fn apply(text: &str, edits: &[Edit]) -> String {
        let mut chars: Vec<char> = text.chars().collect();
        for e in edits {
            match e {
                Edit::Remove(at) if !chars.is_empty() => {
                    chars.remove(at.index(chars.len()));
                }
                Edit::Remove(_) => {}
                Edit::Insert(at, c) => chars.insert(at.index(chars.len() + 1), INSERTED[*c]),
                Edit::Truncate(at) => chars.truncate(at.index(chars.len() + 1)),
                Edit::DuplicateLine(at) => {
                    let s: String = chars.iter().collect();
                    let mut lines: Vec<&str> = s.lines().collect();
                    if !lines.is_empty() {
                        let i = at.index(lines.len());
                        lines.insert(i, lines[i]);
                    }
                    chars = lines.join("\n").chars().collect();
                }
            }
        }
        chars.into_iter().collect()
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(1024))]

        #[test]
        fn parses_or_refuses_naming_a_line(
            base in 0..2usize,
            edits in prop::collection::vec(edit(), 1..6),
        ) {
            let text = apply(&bases()[base], &edits);
            let lines = text.lines().count();
            for parsed in [Case::parse(&text, "m.case"), Case::parse_for_check(&text, "m.case")] {
                if let Err(e) = parsed {
                    prop_assert_eq!(e.file.as_str(), "m.case");
                    prop_assert!(e.line <= lines + 1, "line {} of {}: {}", e.line, lines, e);
                }
            }
        }
    }
}
