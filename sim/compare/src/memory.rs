//! The process's peak resident memory, printed beside `compare`'s tables: the figure that says
//! whether a scale fits a laptop (the seed scale's large database held 6.2 GB before its
//! variants shared the template's disk; docs/compare.md). It is a measurement of the machine's
//! allocator, not of the code, so it goes to stderr and into no table or snapshot; the
//! deterministic evidence is the simulated disk's own byte count (`crashlab_sim::disk::memory`).

/// The peak resident set size of this process in bytes (`VmHWM` in `/proc/self/status`), or
/// `None` where that file does not exist or does not say (not Linux).
pub fn peak_resident_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    vm_hwm(&status)
}

/// `VmHWM`, in bytes, from the text of a `/proc/<pid>/status` file.
fn vm_hwm(status: &str) -> Option<u64> {
    let line = status.lines().find_map(|l| l.strip_prefix("VmHWM:"))?;
    let kib = line.trim().strip_suffix("kB")?.trim().parse::<u64>().ok()?;
    kib.checked_mul(1024)
}

/// The line `compare` prints after its tables, when the figure is known.
pub fn report_line() -> Option<String> {
    let bytes = peak_resident_bytes()?;
    Some(format!(
        "peak resident memory: {:.1} MiB (VmHWM)",
        bytes as f64 / f64::from(1 << 20)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_vm_hwm_from_a_status_file() {
        let status = "Name:\tcrashlab\nVmPeak:\t  9000 kB\nVmHWM:\t  2296052 kB\nVmRSS:\t 12 kB\n";
        assert_eq!(vm_hwm(status), Some(2_296_052 * 1024));
        assert_eq!(vm_hwm("VmRSS:\t12 kB\n"), None);
        assert_eq!(vm_hwm("VmHWM:\tmany kB\n"), None);
    }

    #[test]
    #[cfg_attr(not(target_os = "linux"), ignore = "VmHWM is Linux's")]
    fn this_process_has_a_peak() {
        let held = vec![1u8; 8 << 20];
        let peak = peak_resident_bytes().expect("Linux reports VmHWM");
        assert!(peak >= held.len() as u64, "{peak}");
    }
}
