#!/usr/bin/env python3
"""Join crashlab's peer benchmarks (criterion) and bbolt's (tools/bbolt/bench) into Markdown.

    join.py collect CRITERION_DIR > rust.jsonl
        One JSON object per criterion benchmark: {"id": "group/engine/mode", "median_ns": N},
        the median point estimate of new/estimates.json.

    join.py table RESULTS.jsonl... > table.md
        The µs/op table, the ratio table against bbolt's default configuration
        (bbolt-array-synced) and the targets of the peer-benchmark issue. When an id appears
        in several files (several runs), the cell shows the range "lo–hi".
"""
import json
import os
import sys

BASELINE = "bbolt-array-synced"
# (column title, group, mode); reads are measured once per engine with mode "read".
COLUMNS = [
    ("Get", "get", "read"),
    ("Get100 (per tx of 100)", "get100", "read"),
    ("Set, sync", "set", "sync"),
    ("Set, no_sync", "set", "no_sync"),
    ("Set100, sync", "set100", "sync"),
    ("Set100, no_sync", "set100", "no_sync"),
    ("Delete, sync", "delete", "sync"),
    ("Delete, no_sync", "delete", "no_sync"),
    ("large-DB Set, sync", "large_set", "sync"),
    ("large-DB Set, no_sync", "large_set", "no_sync"),
    ("reopen large DB (ms)", "reopen", "sync"),
]
CPU_BOUND = [c for c in COLUMNS if c[2] in ("read", "no_sync")]
SYNC_BOUND = [c for c in COLUMNS if c[1] != "reopen" and c[2] == "sync"]
# (row label, engine, mode substitutions): SQLite's NORMAL fills the durable columns.
ROWS = [
    ("bbolt array / synced (default)", "bbolt-array-synced", {}),
    ("bbolt array / not synced", "bbolt-array-nosync", {}),
    ("bbolt hashmap / synced", "bbolt-hashmap-synced", {}),
    ("bbolt hashmap / not synced (etcd)", "bbolt-hashmap-nosync", {}),
    ("crashlab array / synced", "crashlab-array-synced", {}),
    ("crashlab array / not synced", "crashlab-array-nosync", {}),
    ("crashlab hashmap / synced", "crashlab-hashmap-synced", {}),
    ("crashlab hashmap / not synced", "crashlab-hashmap-nosync", {}),
    ("redb", "redb", {}),
    ("LMDB (heed)", "lmdb", {}),
    ("SQLite WAL, FULL / OFF", "sqlite", {}),
    ("SQLite WAL, NORMAL (not power-safe)", "sqlite", {"sync": "normal", "no_sync": None,
                                                       "read": None}),
]


def collect(root):
    for dirpath, _, files in os.walk(root):
        if os.path.basename(dirpath) != "new" or "estimates.json" not in files:
            continue
        with open(os.path.join(dirpath, "benchmark.json")) as f:
            bench = json.load(f)
        with open(os.path.join(dirpath, "estimates.json")) as f:
            est = json.load(f)
        print(json.dumps({"id": bench["full_id"], "median_ns": est["median"]["point_estimate"]}))


def load(paths):
    """id -> list of medians (ns), one per file that has it."""
    results = {}
    for p in paths:
        with open(p) as f:
            for line in f:
                line = line.strip()
                if line:
                    r = json.loads(line)
                    results.setdefault(r["id"], []).append(r["median_ns"])
    return results


def cell_id(engine, group, mode, subst):
    mode = subst.get(mode, mode)
    return None if mode is None else f"{group}/{engine}/{mode}"


def fmt(v, unit):
    x = v / unit
    return f"{x:,.0f}" if x >= 100 else f"{x:.1f}" if x >= 10 else f"{x:.2f}"


def fmt_range(vals, unit):
    lo, hi = min(vals), max(vals)
    if fmt(lo, unit) == fmt(hi, unit):
        return fmt(lo, unit)
    return f"{fmt(lo, unit)}–{fmt(hi, unit)}"


def unit_of(group):
    return 1e6 if group == "reopen" else 1e3


def mid(vals):
    return sorted(vals)[len(vals) // 2] if len(vals) % 2 else sum(sorted(vals)[len(vals) // 2 - 1:len(vals) // 2 + 1]) / 2


def row_cells(results, engine, subst, render):
    out = []
    for _, group, mode in COLUMNS:
        cid = cell_id(engine, group, mode, subst)
        vals = results.get(cid) if cid else None
        out.append(render(vals, group, mode) if vals else "—")
    return out


def table(paths):
    results = load(paths)
    runs = max((len(v) for v in results.values()), default=0)
    header = "| engine / configuration | " + " | ".join(c[0] for c in COLUMNS) + " |"
    rule = "|---" * (len(COLUMNS) + 1) + "|"
    print(f"µs per operation (median; {runs} run(s): a range is lowest–highest across runs)\n")
    print(header)
    print(rule)
    for label, engine, subst in ROWS:
        cells = row_cells(results, engine, subst, lambda v, g, m: fmt_range(v, unit_of(g)))
        if set(cells) != {"—"}:
            print(f"| {label} | " + " | ".join(cells) + " |")

    def ratio(vals, group, mode):
        base = results.get(f"{group}/{BASELINE}/{mode if mode != 'normal' else 'sync'}")
        if not base:
            return "—"
        r = [mid(base) / v for v in vals]
        lo, hi = min(r), max(r)
        return f"{lo:.2f}×" if f"{lo:.2f}" == f"{hi:.2f}" else f"{lo:.2f}–{hi:.2f}×"

    print(f"\nSpeed against bbolt's default configuration ({BASELINE}, same column): "
          "bbolt's time / this engine's time, so > 1 is faster (the median of bbolt's runs "
          "against each run of the engine)\n")
    print(header)
    print(rule)
    for label, engine, subst in ROWS:
        cells = row_cells(results, engine, subst, ratio)
        if set(cells) != {"—"}:
            print(f"| {label} | " + " | ".join(cells) + " |")
    targets(results)


def paired(results, ours, theirs):
    """Per-run ratios theirs / ours, pairing the i-th result of each (run i of both sides)."""
    a, b = results.get(ours), results.get(theirs)
    if not a or not b or len(a) != len(b):
        return None
    return [y / x for x, y in zip(a, b)]


def verdict(ratios, need):
    lo, hi = min(ratios), max(ratios)
    text = f"{lo:.2f}×" if f"{lo:.2f}" == f"{hi:.2f}" else f"{lo:.2f}–{hi:.2f}×"
    if lo >= need:
        return f"{text} met"
    if hi >= need:
        return f"{text} **met in {sum(r >= need for r in ratios)} of {len(ratios)} runs**"
    return f"{text} **missed**"


def targets(results):
    """The issue's targets for each crashlab configuration against bbolt's same configuration
    (reads: bbolt's default), within each run: bbolt's time / crashlab's time."""
    kinds = ("array-synced", "array-nosync", "hashmap-synced", "hashmap-nosync")
    for title, columns, need in (
        ("CPU-bound rows: target ≥ 2× bbolt's same configuration", CPU_BOUND, 2.0),
        ("Sync-bound rows: target ≥ 1× (parity)", SYNC_BOUND, 1.0),
    ):
        print(f"\n{title} (bbolt's time / crashlab's time in the same run; one figure per run)\n")
        print("| crashlab configuration | " + " | ".join(c[0] for c in columns) + " |")
        print("|---" * (len(columns) + 1) + "|")
        for kind in kinds:
            cells = []
            for _, group, mode in columns:
                reads = mode == "read"
                ours = f"{group}/crashlab-{'array-synced' if reads else kind}/{mode}"
                theirs = f"{group}/bbolt-{'array-synced' if reads else kind}/{mode}"
                r = paired(results, ours, theirs)
                cells.append(verdict(r, need) if r else "—")
            print(f"| {kind} | " + " | ".join(cells) + " |")
    print("\nLarge DB: crashlab's large-DB Set / its Set on the 10,000-key DB, no_sync "
          "(target ≤ 1.2; one figure per run)\n")
    print("| crashlab configuration | large-DB Set / Set |")
    print("|---|---|")
    for kind in kinds:
        r = paired(results, f"set/crashlab-{kind}/no_sync", f"large_set/crashlab-{kind}/no_sync")
        if r:
            lo, hi = min(r), max(r)
            ok = "met" if hi <= 1.2 else "**missed**"
            print(f"| {kind} | {lo:,.2f}–{hi:,.2f} {ok} |")


def main():
    if len(sys.argv) >= 3 and sys.argv[1] == "collect":
        collect(sys.argv[2])
    elif len(sys.argv) >= 3 and sys.argv[1] == "table":
        table(sys.argv[2:])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
