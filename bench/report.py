"""The benchmark's figures: a table on the terminal and a JSON file under bench/results/."""

from __future__ import annotations

import json
import os
import platform
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import psutil


def machine() -> dict[str, Any]:
    model = ""
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists():
        for line in cpuinfo.read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    return {
        "cpus": os.cpu_count(),
        "cpu_model": model,
        "memory_gib": round(psutil.virtual_memory().total / 2**30, 1),
        "os": platform.platform(),
        "python": platform.python_version(),
    }


def rate(rows: int, seconds: float) -> float:
    return rows / seconds if seconds > 0 else 0.0


def _mib(n: int) -> str:
    return f"{n / 2**20:,.0f} MiB"


def print_table(title: str, header: tuple[str, ...], rows: list[tuple[Any, ...]]) -> None:
    cells = [tuple(str(c) for c in header), *[tuple(str(c) for c in r) for r in rows]]
    widths = [max(len(r[i]) for r in cells) for i in range(len(header))]
    print(f"\n{title}")
    for index, row in enumerate(cells):
        print("  " + "  ".join(c.rjust(w) if i else c.ljust(w) for i, (c, w) in enumerate(zip(row, widths, strict=True))))
        if index == 0:
            print("  " + "  ".join("-" * w for w in widths))


def print_report(results: dict[str, Any]) -> None:
    rows = results["rows"]
    base = results["raw_copy"]["rows_per_second"]
    t = results["tidemark"]
    lines = [
        ("raw COPY FROM STDIN (baseline)", f"{results['raw_copy']['seconds']:.1f}", f"{base:,.0f}", "1.00"),
        ("tidemark landing (in-run)", f"{t['landing_seconds']:.1f}", f"{t['landing_rows_per_second']:,.0f}",
         f"{t['landing_rows_per_second'] / base:.2f}"),
        ("tidemark extract (process)", f"{t['full']['extract_seconds']:.1f}", f"{rate(rows, t['full']['extract_seconds']):,.0f}",
         f"{rate(rows, t['full']['extract_seconds']) / base:.2f}"),
        ("tidemark merge (dbt run)", f"{t['full']['merge_seconds']:.1f}", f"{rate(rows, t['full']['merge_seconds']):,.0f}",
         f"{rate(rows, t['full']['merge_seconds']) / base:.2f}"),
        ("tidemark full sync, end to end", f"{t['full']['seconds']:.1f}", f"{t['full']['rows_per_second']:,.0f}",
         f"{t['full']['rows_per_second'] / base:.2f}"),
    ]
    print_table(f"Full first sync of {rows:,} rows", ("step", "seconds", "rows/s", "x COPY"), lines)

    syncs = [("tidemark", t["full"]["seconds"], t["incremental"]["seconds"])]
    for peer in results.get("peers", {}).values():
        syncs.append((peer["name"], peer["full"]["seconds"], peer["incremental"]["seconds"]))
    ours_full, ours_incremental = syncs[0][1], syncs[0][2]
    print_table(
        f"Full and incremental ({results['percent_changed']}% changed) syncs, end to end",
        ("tool", "full s", "full rows/s", "incr s", "incr / full", "full vs tidemark", "incr vs tidemark"),
        [
            (name, f"{full:.1f}", f"{rate(rows, full):,.0f}", f"{incremental:.1f}", f"{incremental / full:.1%}",
             f"{full / ours_full:.2f}x", f"{incremental / ours_incremental:.2f}x")
            for name, full, incremental in syncs
        ],
    )
    print_table(
        f"Applying a batch of all {rows:,} rows, {results['percent_changed']}% changed",
        ("strategy", "seconds", "WAL", "dead tuples", "rows written"),
        [
            (s["strategy"], f"{s['seconds']:.1f}", _mib(s["wal_bytes"]), f"{s['dead_tuples']:,}", f"{s['rows_changed_in_target']:,}")
            for s in results["merge_strategies"]
        ],
    )
    memory = results["driver_memory"]
    print_table(
        "Peak memory of the extract process (Python driver) and of what it started (JVM, workers)",
        ("rows", "driver", "JVM + workers"),
        [(f"{m['rows']:,}", _mib(m["peak_rss_driver"]), _mib(m["peak_rss_children"])) for m in memory],
    )


def write(results: dict[str, Any], folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    path = folder / f"bench-{results['rows']}-{stamp}.json"
    text = json.dumps(results, indent=2, default=str)
    path.write_text(text)
    (folder / "latest.json").write_text(text)
    return path
