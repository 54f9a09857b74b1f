//! Every `crashlab db` command returns on any input — random bytes, or a real file with bytes,
//! words and lengths changed — with exit code 0, 1 or 2, never a panic, and without allocating
//! more than a small multiple of the file's length. When `check` finds nothing, no other command
//! meets damage either (their walks are a subset of `check`'s).
//!
//! The allocation bound is measured with a counting global allocator (`stats_alloc`, whose
//! `unsafe` stays in that crate), so this file holds one test: no other test thread allocates.

use crashlab_dbtool::{run_to, DbCommand};
use crashlab_engine::{Db, MemStorage, Options};
use proptest::prelude::*;
use stats_alloc::{Region, StatsAlloc, INSTRUMENTED_SYSTEM};
use std::alloc::System;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

const PS: usize = 512;

/// A 512-byte-page file with branches, overflow, nested and inline buckets, free pages and two
/// valid metas: what the mutations start from.
fn sample() -> &'static [u8] {
    static SAMPLE: OnceLock<Vec<u8>> = OnceLock::new();
    SAMPLE.get_or_init(|| {
        let mem = MemStorage::new();
        let options = Options {
            page_size: PS as u32,
            ..Options::default()
        };
        let db = Db::open(mem.clone(), options).unwrap();
        db.update(|tx| {
            let mut a = tx.create_bucket(b"a")?;
            for i in 0..120u32 {
                a.put(format!("k{i:03}").as_bytes(), &[i as u8; 24])?;
            }
            a.put(b"big", &[5; 1500])?;
            let mut n = a.create_bucket(b"n")?;
            n.create_bucket(b"deeper")?.put(b"x", b"y")?;
            tx.create_bucket(b"inline")?.put(b"s", b"t")?;
            Ok(())
        })
        .unwrap();
        db.update(|tx| tx.bucket_mut(b"a")?.unwrap().delete(b"k007").map(drop))
            .unwrap();
        drop(db);
        mem.snapshot()
    })
}

#[derive(Clone, Debug)]
enum Edit {
    Byte(usize, u8),
    /// An aligned little-endian word: page ids, counts, offsets and sizes live in these.
    Word(usize, u64),
    Truncate(usize),
}

fn edit() -> impl Strategy<Value = Edit> {
    let interesting = prop_oneof![
        Just(0u64),
        Just(1),
        Just(2),
        Just(3),
        0u64..64,
        Just(0xFFFF),
        Just(u64::from(u32::MAX)),
        Just(u64::MAX),
        any::<u64>(),
    ];
    prop_oneof![
        6 => (any::<usize>(), any::<u8>()).prop_map(|(at, b)| Edit::Byte(at, b)),
        4 => (any::<usize>(), interesting).prop_map(|(at, w)| Edit::Word(at, w)),
        1 => any::<usize>().prop_map(Edit::Truncate),
    ]
}

fn apply(mut file: Vec<u8>, edits: &[Edit]) -> Vec<u8> {
    for e in edits {
        let len = file.len().max(1);
        match *e {
            Edit::Byte(at, b) => {
                if let Some(x) = file.get_mut(at % len) {
                    *x = b;
                }
            }
            Edit::Word(at, w) => {
                let at = (at % len) & !3;
                let end = (at + 8).min(file.len());
                file[at..end].copy_from_slice(&w.to_le_bytes()[..end - at]);
            }
            Edit::Truncate(at) => file.truncate(at % len),
        }
    }
    file
}

fn input() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        1 => prop::collection::vec(any::<u8>(), 0..3 * PS),
        6 => prop::collection::vec(edit(), 1..6).prop_map(|e| apply(sample().to_vec(), &e)),
    ]
}

fn commands(file: &Path, page: u64) -> Vec<DbCommand> {
    let file = file.to_path_buf();
    vec![
        DbCommand::Check { file: file.clone() },
        DbCommand::Info { file: file.clone() },
        DbCommand::Pages {
            file: file.clone(),
            page: None,
        },
        DbCommand::Pages {
            file: file.clone(),
            page: Some(page),
        },
        DbCommand::Stats { file: file.clone() },
        DbCommand::Dump {
            file: file.clone(),
            json: true,
        },
        DbCommand::Dump { file, json: false },
    ]
}

/// Exit code and bytes allocated by one command.
fn run_counted(cmd: &DbCommand) -> (u8, usize, String) {
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let region = Region::new(GLOBAL);
    let code = run_to(cmd, &mut out, &mut err);
    let allocated = region.change().bytes_allocated;
    (code, allocated, String::from_utf8_lossy(&err).into_owned())
}

fn scratch() -> PathBuf {
    static DIR: OnceLock<tempfile::TempDir> = OnceLock::new();
    DIR.get_or_init(|| tempfile::tempdir().unwrap())
        .path()
        .join("f.db")
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 160, ..ProptestConfig::default() })]

    #[test]
    fn every_command_returns_on_any_file(bytes in input(), page in 0u64..64) {
        let path = scratch();
        std::fs::write(&path, &bytes).unwrap();
        // Far above what reading a file this size needs; far below what trusting one of its
        // length, count or id fields could ask for.
        let bound = 64 * bytes.len() + (8 << 20);
        let mut codes = Vec::new();
        for cmd in commands(&path, page) {
            let (code, allocated, err) = run_counted(&cmd);
            prop_assert!(code <= 2, "{cmd:?}: exit {code}");
            prop_assert!(allocated <= bound, "{cmd:?} allocated {allocated} bytes");
            let is_check = matches!(cmd, DbCommand::Check { .. });
            let said = code == 0 || is_check || !err.is_empty();
            prop_assert!(said, "{:?}: exit {} said nothing on stderr", cmd, code);
            codes.push(code);
        }
        if codes[0] == 0 {
            // `--page` may name a page past the end: exit 2 is its own verdict.
            let others: Vec<u8> = codes.iter().enumerate()
                .filter(|&(i, _)| i != 3)
                .map(|(_, &c)| c)
                .collect();
            prop_assert!(others.iter().all(|&c| c == 0), "check clean, others {codes:?}");
        }
    }
}
