#!/usr/bin/env python3
"""The kernel's system time per write pattern, with no engine in the way.

Each of N "transactions" appends 36 KiB at the end of a file in /tmp (or TMPDIR) — in one
`pwrite`, or in pieces of CHUNK bytes — then rewrites one 4 KiB meta page (alternating pages 0
and 1), as a no_sync copy-on-write commit does. Prints the system time per transaction.
Run patterns alternately, several times: on a shared VM the same pattern's cost moves between
runs by more than the patterns differ (BENCHMARKS.md, "Why the missed rows miss").

    python3 tools/bench/pwrite_probe.py one 20000
    python3 tools/bench/pwrite_probe.py split 20000 12288
"""
import os
import sys
import tempfile

TX_BYTES = 36 * 1024
PAGE = 4096


def usage(why):
    """Bad arguments: say what was expected, exit 2."""
    print(f"pwrite_probe.py: {why}\nusage: pwrite_probe.py one|split N [CHUNK]", file=sys.stderr)
    sys.exit(2)


def main():
    if len(sys.argv) not in (3, 4) or sys.argv[1] not in ("one", "split"):
        usage("expected a pattern (one or split), a count and, for split, a chunk size")
    try:
        mode, n = sys.argv[1], int(sys.argv[2])
        chunk = int(sys.argv[3]) if len(sys.argv) > 3 else PAGE
    except ValueError:
        usage("N and CHUNK are whole numbers")
    if not (1 <= n <= 10_000_000 and 1 <= chunk <= TX_BYTES):
        usage(f"N from 1 to 10000000, CHUNK from 1 to {TX_BYTES}")
    data, meta = os.urandom(TX_BYTES), os.urandom(PAGE)
    fd, path = tempfile.mkstemp(prefix="pwrite-probe-")
    try:
        end = 2 * PAGE
        before = os.times()
        size = TX_BYTES if mode == "one" else chunk
        for i in range(n):
            for at in range(0, TX_BYTES, size):
                os.pwrite(fd, data[at:at + size], end + at)
            end += TX_BYTES
            os.pwrite(fd, meta, (i % 2) * PAGE)
        after = os.times()
    finally:
        os.close(fd)
        os.unlink(path)
    sys_s = after.system - before.system
    print(f"{mode} chunk {size}: {n} transactions, "
          f"system {sys_s:.2f} s, {sys_s / n * 1e6:.1f} µs a transaction")


if __name__ == "__main__":
    main()
