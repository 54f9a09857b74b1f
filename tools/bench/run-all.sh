#!/usr/bin/env bash
# Run every engine's seed-shape benchmarks in one go — crashlab's engine, redb, LMDB and SQLite
# (criterion, bench/benches/peers.rs), then bbolt (Go, tools/bbolt/bench) — and join them into
# one Markdown table.
#
#   bash tools/bench/run-all.sh [OUTDIR]
#
# OUTDIR (default target/bench-results/DATE) receives: machine.txt, rust.log, rust.jsonl,
# interleaved.{log,jsonl}, bbolt.log, bbolt.jsonl and table.md. To join several runs into
# ranges:
#   python3 tools/bench/join.py table RUN1/*.jsonl RUN2/*.jsonl
#
# Environment: CARGO_TARGET_DIR (default bench/target); CRASHLAB_BENCH_GROUPS (comma-separated
# groups, both sides) and CRASHLAB_BENCH_ENGINES (comma-separated Rust engine names) run a
# subset; BBOLT_BENCH_ENGINES does the same for the bbolt side.
#
# The interleaved blocks: the no_sync Set, Set100 and Delete grow their files, and a page the
# page cache takes for the first time costs what the machine's memory costs that second; the
# durable ones wait for syncs that are as uneven, and the main run measures bbolt's minutes
# after crashlab's. So after the criterion run, crashlab's four configurations run those shapes
# again with LMDB (no_sync) and with bbolt's four (durable, bbolt in `bbolt-bench -serve`
# processes), every database open at once, taking turns in blocks of milliseconds
# (bench/benches/interleaved.rs); join.py judges the write targets on these (ids
# "interleaved/...").
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
out="${1:-$root/target/bench-results/$(date +%Y%m%d-%H%M%S)}"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
target="${CARGO_TARGET_DIR:-$root/bench/target}"

{
    echo "date: $(date -u +%Y-%m-%dT%H:%MZ)"
    echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //') × $(nproc)"
    echo "memory: $(free -g | awk '/Mem:/ {print $2 " GiB"}')"
    echo "kernel: $(uname -sr)"
    echo "filesystem of TMPDIR: $(df -T "${TMPDIR:-/tmp}" | awk 'NR==2 {print $2}')"
    echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
    # A VM whose host takes freed memory back (free page reporting) makes a page's first touch
    # cost a host fault: the growing-file shapes feel it (bench/benches/interleaved.rs).
    if [ -d /sys/module/page_reporting/parameters ]; then
        echo "free page reporting: $(grep -H . /sys/module/page_reporting/parameters/* 2>/dev/null |
            sed 's|.*/||' | paste -sd' ')"
    else
        echo "free page reporting: not in this kernel"
    fi
    rustc --version
    go version 2>/dev/null || true
    echo "bbolt: $(dpkg-query -W -f='${Version}' golang-github-coreos-bbolt-dev 2>/dev/null || echo '?')"
    grep -A1 -E '^name = "(redb|heed|lmdb-master-sys|rusqlite|libsqlite3-sys|criterion)"$' \
        "$root/bench/Cargo.lock" | grep -v '^--' | paste - - | sed 's/name = //; s/version = //'
} >"$out/machine.txt"
cat "$out/machine.txt"

echo "== Rust: crashlab, redb, LMDB, SQLite (criterion)" >&2
rm -rf "$target/criterion"
(cd "$root/bench" && CARGO_TARGET_DIR="$target" cargo bench --bench peers) 2>&1 | tee "$out/rust.log" >&2
python3 "$root/tools/bench/join.py" collect "$target/criterion" >"$out/rust.jsonl"

echo "== Go: build bbolt's benchmark" >&2
bash "$root/tools/bbolt/install.sh"
# shellcheck source=../bbolt/env.sh
source "$root/tools/bbolt/env.sh"
(cd "$root/tools/bbolt" && go build -o "$BBOLT_BIN_DIR/bbolt-bench" ./bench)

echo "== Rust and Go: write commits of crashlab beside LMDB and bbolt, interleaved blocks" >&2
(cd "$root/bench" && CARGO_TARGET_DIR="$target" CRASHLAB_BBOLT_BENCH="$BBOLT_BIN_DIR/bbolt-bench" \
    cargo bench --bench interleaved) >"$out/interleaved.jsonl" 2> >(tee "$out/interleaved.log" >&2)

echo "== Go: bbolt" >&2
"$BBOLT_BIN_DIR/bbolt-bench" -groups "${CRASHLAB_BENCH_GROUPS:-}" \
    -engines "${BBOLT_BENCH_ENGINES:-}" >"$out/bbolt.jsonl" 2> >(tee "$out/bbolt.log" >&2)

echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)" >>"$out/machine.txt"
python3 "$root/tools/bench/join.py" table "$out"/*.jsonl >"$out/table.md"
cat "$out/table.md"
echo "results in $out" >&2
