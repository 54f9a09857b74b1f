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


def targets(results):
    """The issue's three targets, for each crashlab configuration against the same bbolt one."""
    print("\nTargets, per crashlab configuration against bbolt's same configuration "
          "(worst run of crashlab against the median of bbolt's runs)\n")
    print("| configuration | CPU-bound: ≥ 2× bbolt (worst column) | sync-bound: ≥ parity "
          "(worst column) | large-DB Set no_sync / Set no_sync ≤ 1.2 |")
    print("|---|---|---|---|")
    for kind in ("array-synced", "array-nosync", "hashmap-synced", "hashmap-nosync"):
        ours, theirs = f"crashlab-{kind}", f"bbolt-{kind}"
        reads_from = "crashlab-array-synced"

        def worst(columns):
            best = None
            for title, group, mode in columns:
                eng_ours = reads_from if mode == "read" else ours
                eng_theirs = "bbolt-array-synced" if mode == "read" else theirs
                a = results.get(f"{group}/{eng_ours}/{mode}")
                b = results.get(f"{group}/{eng_theirs}/{mode}")
                if not a or not b:
                    continue
                r = mid(b) / max(a)
                if best is None or r < best[0]:
                    best = (r, title)
            return best

        cpu, sync = worst(CPU_BOUND), worst(SYNC_BOUND)
        large = results.get(f"large_set/{ours}/no_sync")
        fresh = results.get(f"set/{ours}/no_sync")

        def verdict(w, need):
            if w is None:
                return "—"
            ok = "met" if w[0] >= need else "**missed**"
            return f"{ok}: {w[0]:.2f}× ({w[1]})"

        lf = "—"
        if large and fresh:
            r = max(large) / mid(fresh)
            lf = f"{'met' if r <= 1.2 else '**missed**'}: {r:.2f}"
        print(f"| {kind} | {verdict(cpu, 2.0)} | {verdict(sync, 1.0)} | {lf} |")


def main():
    if len(sys.argv) >= 3 and sys.argv[1] == "collect":
        collect(sys.argv[2])
    elif len(sys.argv) >= 3 and sys.argv[1] == "table":
        table(sys.argv[2:])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
