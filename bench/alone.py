"""One section of `make bench` run alone against the bench's server (`python -m bench.wide`, ...): its
figures printed and written to bench/results/, or, when it fails, what it measured before."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from bench import databases, report
from bench.databases import BenchDatabases
from bench.tidemark_sync import REPO

Say = Callable[[str], None]


def say(text: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {text}", flush=True)


def run_section(
    key: str,
    name: str,
    fill: Callable[[BenchDatabases, Say, dict[str, Any]], object],
    show: Callable[[dict[str, Any]], None],
) -> int:
    """Start the server, let `fill` measure into results[key] (as it goes), print with `show`, write."""
    bench_db = databases.start()
    started = time.perf_counter()
    results: dict[str, Any] = {"machine": report.machine(), key: {}}
    folder = REPO / "bench" / "results"
    try:
        fill(bench_db, say, results[key])
    except Exception as exc:
        results["failed"] = f"{type(exc).__name__}: {exc}"
        print(f"\nthe bench failed; what it measured is in {report.write(results, folder, name)}")
        raise
    finally:
        databases.stop()
    show(results)
    print(f"\nwritten to {report.write(results, folder, name)} ({time.perf_counter() - started:.0f} s)")
    return 0
