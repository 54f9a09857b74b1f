//! The process's peak resident memory, as Linux keeps it (`VmHWM` in `/proc/self/status`), and
//! its reset (writing `5` to `/proc/self/clear_refs`), so that `crashlab bench` reports each
//! part's own peak beside its throughput. Elsewhere (or where `/proc` says nothing) the figures
//! are absent, never made up.

/// The peak resident set since the process started or the last [`reset`], in KiB.
pub fn peak_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    vm_hwm_kib(&status)
}

/// Start a new peak from the current resident set. False when the system keeps no such peak.
pub fn reset() -> bool {
    std::fs::write("/proc/self/clear_refs", "5").is_ok()
}

/// `VmHWM:  123456 kB` out of a `/proc/PID/status` text.
fn vm_hwm_kib(status: &str) -> Option<u64> {
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let mut words = line.split_whitespace().skip(1);
    let kib = words.next()?.parse().ok()?;
    (words.next() == Some("kB")).then_some(kib)
}

/// A peak for a line of output: `peak 123 MB`, or `peak unknown`.
pub fn describe(kib: Option<u64>) -> String {
    kib.map_or_else(
        || "peak unknown".into(),
        |k| format!("peak {} MB", k.div_ceil(1024)),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_high_water_mark_line() {
        let status = "Name:\tcrashlab\nVmPeak:\t  900 kB\nVmHWM:\t   41236 kB\nVmRSS:\t 1 kB\n";
        assert_eq!(vm_hwm_kib(status), Some(41_236));
        assert_eq!(vm_hwm_kib("VmRSS:\t 1 kB\n"), None);
        assert_eq!(vm_hwm_kib("VmHWM:\t lots kB\n"), None);
        assert_eq!(vm_hwm_kib("VmHWM:\t 12 pages\n"), None);
        assert_eq!(describe(Some(1025)), "peak 2 MB");
        assert_eq!(describe(None), "peak unknown");
    }

    #[test]
    #[cfg_attr(not(target_os = "linux"), ignore = "VmHWM and clear_refs are Linux's")]
    fn a_peak_covers_what_was_held_since_the_reset() {
        assert!(reset(), "Linux resets the peak");
        let before = peak_kib().expect("a system that resets the peak reports it");
        let held = vec![1u8; 64 << 20];
        let during = peak_kib().expect("reported");
        assert!(during >= before + (60 << 10), "{before} then {during} KiB");
        drop(held);
    }
}
