"""One section of `make bench` run alone against the bench's server (`python -m bench.wide`, ...): its
figures printed and written to bench/results/ as they are measured (bench/sections.py); exit code 1 when
it, or a peer in it, failed or was stopped."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from bench import databases, report
from bench.databases import BenchDatabases
from bench.sections import Sections, print_finished
from bench.tidemark_sync import REPO

Say = Callable[[str], None]
#: Where a section reports a peer that failed while it went on: (what failed, why).
OnPeerFailure = Callable[[str, Exception], None]


def say(text: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {text}", flush=True)


def run_section(
    key: str,
    name: str,
    fill: Callable[[BenchDatabases, Say, dict[str, Any], OnPeerFailure], object],
    show: Callable[[dict[str, Any]], None],
) -> int:
    """Start the server, let `fill` measure into results[key] (as it goes), print with `show`, write."""
    bench_db = databases.start()
    started = time.perf_counter()
    results: dict[str, Any] = {"machine": report.machine(), key: {}}
    sections = Sections(results, REPO / "bench" / "results", say, name)
    try:
        sections.run(key, lambda: fill(bench_db, say, results[key], sections.record))
    finally:
        databases.stop()
    print_finished(results, (show,))
    print(f"\nwritten to {sections.save()} ({time.perf_counter() - started:.0f} s)\n{sections.summary()}")
    return 0 if sections.complete else 1
