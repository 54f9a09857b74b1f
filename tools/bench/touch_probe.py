#!/usr/bin/env python3
"""What a page of fresh memory costs on its first touch, with no engine and no file.

Each round maps GIB GiB of anonymous memory, writes one byte to each 4 KiB page (so the kernel
must find and zero a page for each), unmaps it, and prints the wall time per page; PAUSE
seconds pass between rounds. On a VM whose host takes freed memory back (free page reporting,
listed in run-all.sh's machine.txt), memory that stayed free a while costs a host fault on
its first touch: the first round, and rounds after a pause, cost several times what a round
right after another does. A no_sync write shape that grows its file takes new page-cache pages
at that price (BENCHMARKS.md, "Why the missed rows miss").

    python3 tools/bench/touch_probe.py 2 4 0     # four rounds of 2 GiB back to back
    python3 tools/bench/touch_probe.py 2 3 20    # three rounds, 20 s apart
"""
import mmap
import sys
import time

PAGE = 4096
REPORTED = "/sys/module/page_reporting/parameters/reported_kib"


def reported_kib():
    """KiB the guest has reported free to its host so far, where the kernel says."""
    try:
        with open(REPORTED) as f:
            return int(f.read())
    except (OSError, ValueError):
        return None


def touch(gib):
    """Map, touch and unmap `gib` GiB; microseconds per page."""
    size = gib << 30
    m = mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    try:
        start = time.perf_counter()
        for at in range(0, size, PAGE):
            m[at] = 1
        return (time.perf_counter() - start) * 1e6 / (size // PAGE)
    finally:
        m.close()


def usage(why):
    """Bad arguments: say what was expected, exit 2."""
    print(f"touch_probe.py: {why}\nusage: touch_probe.py GIB ROUNDS PAUSE_SECONDS",
          file=sys.stderr)
    sys.exit(2)


def main():
    if len(sys.argv) != 4:
        usage("expected three arguments")
    try:
        gib, rounds, pause = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
    except ValueError:
        usage("GIB and ROUNDS are whole numbers, PAUSE_SECONDS a number")
    if not (1 <= gib <= 64 and 1 <= rounds <= 100 and 0 <= pause <= 3600):
        usage("GIB from 1 to 64, ROUNDS from 1 to 100, PAUSE_SECONDS from 0 to 3600")
    for r in range(rounds):
        before = reported_kib()
        us = touch(gib)
        after = reported_kib()
        note = "" if before is None else f", {(after - before) / 1024:,.0f} MiB reported meanwhile"
        print(f"round {r}: {us:.2f} µs per 4 KiB page{note}", flush=True)
        if pause and r + 1 < rounds:
            time.sleep(pause)


if __name__ == "__main__":
    main()
