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
        padded = [c.rjust(w) if i else c.ljust(w) for i, (c, w) in enumerate(zip(row, widths, strict=True))]
        print("  " + "  ".join(padded))
        if index == 0:
            print("  " + "  ".join("-" * w for w in widths))


def _step(label: str, seconds: float, rows: int, base: float) -> tuple[str, str, str, str]:
    speed = rate(rows, seconds)
    return (label, f"{seconds:.1f}", f"{speed:,.0f}", f"{speed / base:.2f}")


def _median_of(figure: dict[str, Any]) -> str:
    rounds = figure.get("rounds_seconds", [])
    return f", median of {', '.join(f'{s:.1f}' for s in rounds)} s" if len(rounds) > 1 else ""


def print_report(results: dict[str, Any]) -> None:
    rows = results["rows"]
    copy = results["raw_copy"]
    base = copy["rows_per_second"]
    t = results["tidemark"]
    full = t["full"]
    lines = [
        _step(f"raw COPY FROM STDIN (baseline{_median_of(copy)})", copy["seconds"], copy["rows"], base),
        _step("tidemark landing (in-run)", t["landing_seconds"], full["rows_landed"], base),
        _step("tidemark merge statement (in-run)", full["merge_statement_seconds"], rows, base),
        _step("tidemark full sync, end to end (one command)", full["seconds"], rows, base),
    ]
    settings = results.get("postgres_settings", {})
    print("PostgreSQL: " + ", ".join(f"{name}={value}" for name, value in settings.items()))
    print_table(f"Full first sync of {rows:,} rows", ("step", "seconds", "rows/s", "x COPY"), lines)

    syncs = [("tidemark", full["seconds"], t["incremental"])]
    if "incremental_every" in t:
        syncs.append(("tidemark --every", full["seconds"], t["incremental_every"]))
    for peer in results.get("peers", {}).values():
        syncs.append((peer["name"], peer["full"]["seconds"], peer["incremental"]))
    ours_full, ours_incremental = full["seconds"], t["incremental"]["seconds"]
    each = "; ".join(
        f"{name} " + ", ".join(f"{s:.1f}" for s in incremental.get("rounds_seconds", []))
        for name, _, incremental in syncs
    )
    print_table(
        f"Full and incremental ({results['percent_changed']}% changed) syncs, end to end; incremental: the "
        f"median of its rounds ({each} s)",
        ("tool", "full s", "full rows/s", "incr s", "incr / full", "full vs tidemark", "incr vs tidemark"),
        [
            (
                name,
                f"{seconds:.1f}",
                f"{rate(rows, seconds):,.0f}",
                f"{incremental['seconds']:.1f}",
                f"{incremental['seconds'] / seconds:.1%}",
                f"{seconds / ours_full:.2f}x",
                f"{incremental['seconds'] / ours_incremental:.2f}x",
            )
            for name, seconds, incremental in syncs
        ],
    )
    print(
        "  tidemark: one `python -m extract --dbt` command per sync; tidemark --every: each sync of one "
        "long-running `--every` process, timed from SIGUSR1 to its report"
    )
    print_table(
        f"Applying a batch of all {rows:,} rows, {results['percent_changed']}% changed",
        ("strategy", "seconds", "WAL", "dead tuples", "rows written"),
        [
            (
                s["strategy"],
                f"{s['seconds']:.1f}",
                _mib(s["wal_bytes"]),
                f"{s['dead_tuples']:,}",
                f"{s['rows_changed_in_target']:,}",
            )
            for s in results["merge_strategies"]
        ],
    )
    memory = results["driver_memory"]
    print_table(
        "Peak memory of the extract process (Python driver) and of what it started (JVM, workers)",
        ("rows", "driver", "JVM + workers"),
        [(f"{m['rows']:,}", _mib(m["peak_rss_driver"]), _mib(m["peak_rss_children"])) for m in memory],
    )


def print_build(results: dict[str, Any]) -> None:
    """The README's command (`--all --dbt build`: merge, history, tests) against the merge alone."""
    t = results["tidemark"]
    merge, build, quiet = t["incremental"], t["incremental_build"], t["nothing_changed_build"]
    start = quiet["process_start_seconds"]
    print_table(
        f"The README's command on one table of {results['rows']:,} rows (median of rounds)",
        ("sync", "seconds", "vs", "ratio"),
        [
            (f"{results['percent_changed']}% changed, merge alone", f"{merge['seconds']:.1f}", "", ""),
            (
                f"{results['percent_changed']}% changed, --all --dbt build",
                f"{build['seconds']:.1f}",
                "merge alone",
                f"{build['seconds'] / merge['seconds']:.2f}x",
            ),
            ("process start (--help)", f"{start:.1f}", "", ""),
            (
                "nothing changed, within the window",
                f"{quiet['seconds']:.1f}",
                "process start",
                f"+{quiet['seconds'] - start:.1f} s",
            ),
            (
                "nothing changed, past the window",
                f"{quiet['past_window_seconds']:.1f}",
                "process start",
                f"+{quiet['past_window_seconds'] - start:.1f} s",
            ),
        ],
    )


def result_paths(results: dict[str, Any], folder: Path, name: str | None = None) -> tuple[Path, Path]:
    """Where a run's results go: {name}-{time}.json and {name}-latest.json ("bench-{rows}" and latest.json
    by default), the time being now."""
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    path = folder / f"{name or 'bench-' + str(results['rows'])}-{stamp}.json"
    return path, folder / (f"{name}-latest.json" if name else "latest.json")


def save(results: dict[str, Any], paths: tuple[Path, Path]) -> Path:
    """results written to both `paths` (result_paths); the first."""
    paths[0].parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(results, indent=2, default=str)
    for path in paths:
        path.write_text(text)
    return paths[0]


def write(results: dict[str, Any], folder: Path, name: str | None = None) -> Path:
    """results as {name}-{time}.json and {name}-latest.json (result_paths)."""
    return save(results, result_paths(results, folder, name))
