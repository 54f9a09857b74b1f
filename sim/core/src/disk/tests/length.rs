//! The two length models of `SimDisk`: which sync makes a length change durable, and what a
//! crash then keeps.

use super::*;

fn own_barrier(seed: u64) -> SimDisk {
    SimDisk::new(
        seed,
        DiskConfig {
            length: LengthModel::OwnBarrier,
            ..DiskConfig::default()
        },
    )
}

#[test]
fn with_data_every_sync_makes_the_length_durable() {
    let d = disk(40);
    d.write_at(0, &sectors_tagged(2, 1)).unwrap();
    d.sync().unwrap();
    assert_eq!(d.durable_len(), 2 * SS as u64);
    d.crash();
    assert_eq!(d.image(), sectors_tagged(2, 1));
}

#[test]
fn own_barrier_growth_by_writing_is_written_back_but_lost_at_a_crash() {
    let d = own_barrier(41);
    d.write_at(0, &sectors_tagged(2, 1)).unwrap();
    d.sync().unwrap();
    assert!(d.pending_sectors().is_empty(), "the data is written back");
    assert_eq!(d.durable_len(), 0, "but not the length");
    assert_eq!(d.image(), sectors_tagged(2, 1), "reads still see it");
    let (durable, visible) = d.peek(0, 2 * SS as u64);
    assert!(durable.is_empty());
    assert_eq!(visible, sectors_tagged(2, 1));
    d.crash();
    assert_eq!(d.len().unwrap(), 0);
    // Growth after a crash starts from never-written space: the old bytes stay gone.
    d.set_len(2 * SS as u64).unwrap();
    assert_eq!(d.image(), vec![0u8; 2 * SS]);
}

#[test]
fn own_barrier_the_sync_right_after_a_growing_set_len_persists_the_length() {
    let d = own_barrier(42);
    d.set_len(4 * SS as u64).unwrap();
    // Reads and `len` between do not count; they change nothing.
    assert_eq!(read(&d, 0, 10).unwrap(), vec![0u8; 10]);
    assert_eq!(d.len().unwrap(), 4 * SS as u64);
    d.sync().unwrap();
    assert_eq!(d.durable_len(), 4 * SS as u64);
    // Writes inside the durable length are durable by any sync.
    d.write_at(SS as u64, &sectors_tagged(2, 5)).unwrap();
    d.sync().unwrap();
    d.crash();
    assert_eq!(d.len().unwrap(), 4 * SS as u64);
    assert_eq!(read(&d, SS as u64, 2 * SS).unwrap(), sectors_tagged(2, 5));
}

#[test]
fn own_barrier_a_write_between_set_len_and_sync_breaks_the_barrier() {
    let d = own_barrier(43);
    d.set_len(2 * SS as u64).unwrap();
    d.write_at(0, &sectors_tagged(2, 1)).unwrap();
    d.sync().unwrap();
    assert_eq!(d.durable_len(), 0);
    // So does a set_len that does not grow.
    d.set_len(3 * SS as u64).unwrap();
    d.set_len(3 * SS as u64).unwrap();
    d.sync().unwrap();
    assert_eq!(d.durable_len(), 0);
    // A later growth sync persists the new length and with it what was written back before.
    d.set_len(4 * SS as u64).unwrap();
    d.sync().unwrap();
    d.crash();
    assert_eq!(d.len().unwrap(), 4 * SS as u64);
    assert_eq!(read(&d, 0, 2 * SS).unwrap(), sectors_tagged(2, 1));
}

#[test]
fn own_barrier_a_failed_sync_keeps_the_barrier_and_drops_no_written_back_sector() {
    let d = own_barrier(44);
    d.write_at(0, &sectors_tagged(2, 1)).unwrap();
    d.sync().unwrap();
    d.set_len(3 * SS as u64).unwrap();
    d.set_faults(FaultConfig {
        sync_eio: 1.0,
        ..FaultConfig::none()
    });
    assert!(d.sync().is_err());
    assert_eq!(d.fault_counts().sectors_dropped_by_failed_sync, 0);
    assert_eq!(read(&d, 0, 2 * SS).unwrap(), sectors_tagged(2, 1));
    // The retried sync, with no write between, still follows the growth.
    d.set_faults(FaultConfig::none());
    d.sync().unwrap();
    assert_eq!(d.durable_len(), 3 * SS as u64);
    d.crash();
    assert_eq!(read(&d, 0, 2 * SS).unwrap(), sectors_tagged(2, 1));
}

#[test]
fn own_barrier_a_shrink_is_durable_by_any_sync() {
    let d = own_barrier(45);
    d.set_len(4 * SS as u64).unwrap();
    d.sync().unwrap();
    d.write_at(0, &sectors_tagged(4, 1)).unwrap();
    d.sync().unwrap();
    d.set_len(SS as u64 + 10).unwrap();
    // Regrowth by writing after the shrink is not durable; the shrink is.
    d.write_at(2 * SS as u64, &sectors_tagged(1, 9)).unwrap();
    d.sync().unwrap();
    assert_eq!(d.durable_len(), SS as u64 + 10);
    d.crash();
    assert_eq!(d.len().unwrap(), SS as u64 + 10);
    assert_eq!(
        read(&d, 0, SS + 10).unwrap(),
        sectors_tagged(2, 1)[..SS + 10]
    );
}

#[test]
fn own_barrier_a_crash_forgets_the_growth_and_make_all_durable_persists_everything() {
    let d = own_barrier(46);
    d.set_len(2 * SS as u64).unwrap();
    d.crash();
    d.sync().unwrap();
    assert_eq!(d.durable_len(), 0, "the crash ended the barrier");
    d.write_at(0, &sectors_tagged(3, 1)).unwrap();
    d.make_all_durable();
    assert_eq!(d.durable_len(), 3 * SS as u64);
    assert!(d.pending_sectors().is_empty());
    d.crash();
    assert_eq!(d.image(), sectors_tagged(3, 1));
    assert_eq!(d.io_stats().syncs, 1, "make_all_durable is no storage call");
}
