//! Large pages: a sixteenth of the seeds draw 16 or 64 KiB pages (with a page cache), where a
//! quantity that fits 16 bits at smaller pages may not. Negative control (y),
//! `page-size-16-bits`, writes each commit's meta with 16 bits of its page size: 65,536 becomes
//! 0, and the next open finds that meta invalid. On every other page size it must change
//! nothing (the same trace and image), so only the seeds that draw 64 KiB pages show it.

use crashlab_engine::Options;
use crashlab_sim::adapter::EngineConfig;
use crashlab_sim::control::Control;
use crashlab_sim::profile::Profile;

use crate::seeded_control::{saved_case_and_twins, sweep_control};

const SEEDS: u64 = 400;

#[test]
fn a_sixteenth_of_the_seeds_draw_large_pages_with_a_page_cache() {
    let drawn: Vec<Options> = (0..SEEDS)
        .map(|seed| Options::from_seed(seed, Profile::Default))
        .collect();
    let large: Vec<&Options> = drawn.iter().filter(|o| o.page_size > 4096).collect();
    let n = large.len() as u64;
    assert!(
        (SEEDS / 32..=SEEDS / 8).contains(&n),
        "{n} of {SEEDS} seeds"
    );
    for size in [16_384, 65_536] {
        assert!(large.iter().any(|o| o.page_size == size), "{size} drawn");
    }
    assert!(large.iter().all(|o| o.page_cache_pages >= 1024));
    // `scale` keeps its 512-byte pages.
    let scale = (0..SEEDS).map(|seed| Options::from_seed(seed, Profile::Scale));
    assert!(scale.into_iter().all(|o| o.page_size == 512));
}

#[test]
fn a_page_size_kept_in_16_bits_is_caught_on_64_kib_pages_only() {
    let is_64k =
        |cfg: &crashlab_sim::config::RunConfig<Options>| Some(cfg.engine.page_size == 65_536);
    let mut judged = Vec::new();
    let control = Control::PageSize16Bits;
    let (caught, reached, inert) = sweep_control(SEEDS, control, is_64k, |seed, v| {
        judged.push((seed, v.to_string()));
    });
    assert!(
        reached >= 4,
        "{reached} of {SEEDS} seeds on 64 KiB pages, {inert} on others"
    );
    assert!(caught * 2 >= reached, "caught on {caught} of {reached}");
    for (seed, v) in &judged {
        // The next open refuses the meta, or falls back past an acknowledged commit.
        let why = ["invalid page size 0", "durab"];
        assert!(why.iter().any(|w| v.contains(w)), "seed {seed}: {v}");
    }
}

/// The saved case of control (y) fails; its clean twin passes, and so does the case on 16 KiB
/// pages, whose size fits 16 bits.
#[test]
fn the_saved_page_size_case_fails_only_on_64_kib_pages() {
    let (run, v) = saved_case_and_twins("page-size-16-bits", |run| {
        run.engine.page_size = 16_384;
    });
    assert_eq!(run.engine.page_size, 65_536);
    assert!(v.detail.contains("invalid page size 0"), "{v}");
}
