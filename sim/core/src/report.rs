//! Printing a run for people: after its header ([`crate::runner::header`], every choice the seed
//! made), the outcome, the work done, the faults injected, the engine's counters and the trace
//! hash.

use crate::runner::Report;
use crate::verdict::Outcome;
use std::fmt::Write as _;

pub fn outcome_line(outcome: &Outcome) -> String {
    match outcome {
        Outcome::Ok => "ok".into(),
        Outcome::Violation(v) => format!("VIOLATION {v}"),
        Outcome::DiskFailure(s) => format!("stopped: disk failure ({s})"),
    }
}

pub fn body(r: &Report) -> String {
    let mut s = String::new();
    let st = &r.stats;
    let _ = writeln!(s, "outcome: {}", outcome_line(&r.outcome));
    let _ = writeln!(
        s,
        "  ops {} · commits {} (failed {}) · power cuts {} · reopens {} · I/O errors seen {}",
        st.ops_run, st.commits, st.failed_commits, st.crashes, st.reopens, st.io_errors
    );
    let _ = writeln!(
        s,
        "  background: {} snapshot checks by reader tasks · {} power cuts at a simulated instant",
        st.background_snapshot_checks, st.timer_power_cuts
    );
    let f = &r.faults;
    let _ = writeln!(
        s,
        "  faults: read_eio {} write_eio {} sync_eio {} (sectors dropped {}) latent {} (read errors {}) bit_flips {} misdirected {} enospc {} lying_syncs {} garbage_reads {}",
        f.read_eio, f.write_eio, f.sync_eio, f.sectors_dropped_by_failed_sync, f.latent_sectors,
        f.latent_read_errors, f.bit_flips, f.misdirected_writes, f.enospc, f.lying_syncs, f.garbage_sector_reads
    );
    let _ = writeln!(
        s,
        "  crash sectors: kept {} lost {} torn writes {} · sub-sector tears {} · torn metas {}",
        f.sectors_kept_in_crash,
        f.sectors_lost_in_crash,
        f.torn_writes_in_crash,
        f.sub_sector_tears,
        r.torn_metas
    );
    let c = &r.counters;
    let _ = writeln!(
        s,
        "  engine: commits {} syncs {} write_calls {} pages_written {} bytes_written {} pages_read {} cache_hits {}",
        c.commits, c.syncs, c.write_calls, c.pages_written, c.bytes_written, c.pages_read, c.page_cache_hits
    );
    let io = &r.io;
    let _ = writeln!(
        s,
        "  disk: reads {} writes {} syncs {} · simulated time {:.3} ms",
        io.reads,
        io.writes,
        io.syncs,
        io.sim_time_ns as f64 / 1e6
    );
    let _ = writeln!(
        s,
        "  trace: {} events, hash {:016x} · image hash {:016x}",
        r.trace_events, r.trace_hash, r.image_hash
    );
    s
}
