//! The checksum probe: a bit flipped inside a range the engine covers by a checksum (crashlab's
//! two metas) must open as the range zeroed does. Negative control (u),
//! `meta-checksum-skips-txid`, leaves the txid out of the meta's checksum on write and on open:
//! every file it writes opens and checks clean, so only damage to a txid shows it, which no
//! recovery check of `default` ever sees and the probe does.

use crashlab_engine::{Db, MemStorage, Options};
use crashlab_sim::adapter::EngineConfig;
use crashlab_sim::case::Case;
use crashlab_sim::config::RunConfig;
use crashlab_sim::control::Control;
use crashlab_sim::crashlab::CrashlabDb;
use crashlab_sim::driver::{recover_image, Recovered, Settings};
use crashlab_sim::profile::Profile;
use crashlab_sim::runner::run_with;
use crashlab_sim::verdict::{Outcome, Verdict};

const SEEDS: u64 = 120;

fn control(options: &Options, control: Control) -> Options {
    options.with_control(control).unwrap()
}

#[test]
fn a_checksum_that_leaves_the_txid_out_is_caught_by_the_probe_and_by_nothing_else() {
    let off = Settings {
        checksum_probes: false,
        ..Settings::default()
    };
    let (mut caught, mut probes) = (0, 0);
    for seed in 0..SEEDS {
        let clean = RunConfig::<Options>::from_seed(seed, 300, Profile::Default);
        let twin = run_with::<CrashlabDb>(&clean, Settings::default());
        assert!(
            !twin.outcome.is_violation(),
            "seed {seed}: {:?}",
            twin.outcome
        );
        probes += twin.stats.checksum_probes;
        let mut buggy = clean.clone();
        buggy.engine = control(&buggy.engine, Control::MetaChecksumSkipsTxid);
        let without = run_with::<CrashlabDb>(&buggy, off);
        assert!(
            !without.outcome.is_violation(),
            "seed {seed} without the probe: {:?}",
            without.outcome
        );
        assert_eq!(without.stats.checksum_probes, 0, "seed {seed}: probes off");
        if let Outcome::Violation(v) = run_with::<CrashlabDb>(&buggy, Settings::default()).outcome {
            assert_eq!(v.verdict, Verdict::ChecksumProbe, "seed {seed}: {v}");
            // Meta bytes 48..56 (file bytes 64..72 of a meta page) hold the txid.
            assert!(v.detail.contains("checksummed range"), "seed {seed}: {v}");
            caught += 1;
        }
    }
    // The last recovery is probed always, the others one in four: more than one probe a seed.
    // Not every seed's probes show the control: 24 of these 120 did, 23 once leaves at the
    // right edge began to split full (other pages, other traces); at least one in six must.
    assert!(probes > SEEDS, "{probes} probes in {SEEDS} seeds");
    assert!(caught >= SEEDS / 6, "caught on {caught} of {SEEDS} seeds");
}

#[test]
fn a_meta_checksum_never_verified_is_caught_by_the_probe_too() {
    let mut by_probe = 0;
    for seed in 0..SEEDS / 2 {
        let mut cfg = RunConfig::<Options>::from_seed(seed, 300, Profile::Default);
        cfg.engine = control(&cfg.engine, Control::MetaUnchecked);
        if let Outcome::Violation(v) = run_with::<CrashlabDb>(&cfg, Settings::default()).outcome {
            by_probe += u32::from(v.verdict == Verdict::ChecksumProbe);
        }
    }
    assert!(
        by_probe * 2 >= SEEDS as u32 / 2,
        "{by_probe} of {} seeds",
        SEEDS / 2
    );
}

/// A file of three commits (bucket `b`, keys put and deleted), as `options` writes it.
fn three_commits(options: &Options) -> Vec<u8> {
    let mem = MemStorage::new();
    let db = Db::open(mem.clone(), options.clone()).unwrap();
    db.update(|tx| tx.create_bucket(b"b")?.put(b"k1", b"1"))
        .unwrap();
    db.update(|tx| tx.bucket_mut(b"b")?.unwrap().put(b"k2", b"2"))
        .unwrap();
    db.update(|tx| tx.bucket_mut(b"b")?.unwrap().delete(b"k1").map(drop))
        .unwrap();
    drop(db);
    mem.snapshot()
}

/// The bits of both metas whose flip opens otherwise than the meta zeroed (both refusals agree).
fn disagreeing_bits(options: &Options) -> Vec<(usize, usize)> {
    let image = three_commits(options);
    let ps = options.page_size as usize;
    let same = |a: &Recovered, b: &Recovered| match (a, b) {
        (Recovered::Corrupt(_), Recovered::Corrupt(_)) => true,
        _ => a == b,
    };
    let mut found = Vec::new();
    for start in [16, ps + 16] {
        let mut lost = image.clone();
        lost[start..start + 64].fill(0);
        let want = recover_image::<CrashlabDb>(lost, options);
        assert!(matches!(want, Recovered::State(_)), "{want:?}");
        for bit in 0..64 * 8 {
            let mut flipped = image.clone();
            flipped[start + bit / 8] ^= 1 << (bit % 8);
            let got = recover_image::<CrashlabDb>(flipped, options);
            assert!(!matches!(got, Recovered::Panic(_)), "{got:?}");
            if !same(&got, &want) {
                found.push((start, bit / 8));
            }
        }
    }
    found
}

/// Every one of the 1,024 bits of the two metas, not a sample: the format's checksum makes each
/// flip open as the meta zeroed; the control's lets flips of the txid (meta bytes 48..56)
/// through, and no others.
#[test]
fn every_bit_of_both_metas_opens_as_its_meta_zeroed_unless_the_checksum_skips_the_txid() {
    let options = Options {
        page_size: 1024,
        ..Options::default()
    };
    assert_eq!(disagreeing_bits(&options), vec![]);
    let bad = disagreeing_bits(&control(&options, Control::MetaChecksumSkipsTxid));
    assert!(!bad.is_empty(), "no txid flip got through");
    assert!(
        bad.iter().all(|&(_, byte)| (48..56).contains(&byte)),
        "{bad:?}"
    );
}

/// The saved case of control (u) fails at the probe; without the hook, or with the probe off,
/// it passes.
#[test]
fn the_saved_meta_checksum_skips_txid_case_fails_only_at_the_probe() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../corpus/negative/meta-checksum-skips-txid.case");
    let case = Case::<Options>::load(&path).unwrap_or_else(|e| panic!("{e}"));
    let Outcome::Violation(v) = run_with::<CrashlabDb>(&case.run, Settings::default()).outcome
    else {
        panic!("the saved case passes");
    };
    assert_eq!(v.verdict, Verdict::ChecksumProbe, "{v}");
    let off = Settings {
        checksum_probes: false,
        ..Settings::default()
    };
    let without = run_with::<CrashlabDb>(&case.run, off).outcome;
    assert!(!without.is_violation(), "probe off: {without:?}");
    let mut clean = case.run.clone();
    clean.engine.debug = Default::default();
    let twin = run_with::<CrashlabDb>(&clean, Settings::default()).outcome;
    assert!(!twin.is_violation(), "clean twin: {twin:?}");
}
