"""`python -m bench.reconcile_only [--rows N]`: the reconcile and catalog sections of `make bench` alone,
on a fresh table of N rows (10,000,000 by default) synced once: planted differences found and repaired
against reladiff, a key scan and count(*), the reconcile's driver memory at N/10 and N rows, and the
catalog read over 1,000 tables. Written to bench/results/ as reconcile-{rows}-{time}.json."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

import psycopg

from bench import catalog_read, databases, reconcile_rounds, report, workload
from bench.databases import BenchDatabases
from bench.reconcile_report import print_reconcile
from bench.sections import Sections, print_finished
from bench.tidemark_sync import REPO, TidemarkProject


def _say(text: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {text}", flush=True)


def _synced(bench_db: BenchDatabases, rows: int, name: str) -> TidemarkProject:
    bench_db.recreate()
    _say(f"{rows:,} rows generated and synced once")
    with psycopg.connect(bench_db.source_url, autocommit=True) as conn:
        workload.create(conn, rows)
    project = TidemarkProject(databases.WORK_DIR / name, bench_db.env, bench_db.target_url)
    project.sync()
    return project


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.reconcile_only", description=__doc__)
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "results")
    args = parser.parse_args()
    if args.rows < 10_000:
        parser.error(f"--rows must be at least 10,000, not {args.rows}")
    bench_db = databases.start()
    results: dict[str, Any] = {"rows": args.rows, "machine": report.machine()}
    sections = Sections(results, args.out, _say, f"reconcile-{args.rows}")
    memory: list[dict[str, Any]] = []
    results["driver_memory"] = memory

    def probe() -> None:
        small = args.rows // 10
        synced = _synced(bench_db, small, "tidemark-probe")
        peaks = reconcile_rounds.memory_probe(synced, bench_db, small)
        memory.append({"rows": small, **reconcile_rounds.memory_figures(peaks)})

    def reconcile() -> None:
        project = _synced(bench_db, args.rows, "tidemark")
        section: dict[str, Any] = {}
        results["reconcile"] = section
        reconcile_rounds.measure(project, bench_db, args.rows, _say, section=section, on_peer_failure=sections.record)
        peaks = reconcile_rounds.level_peaks(section)
        memory.append({"rows": args.rows, **reconcile_rounds.memory_figures(peaks)})

    try:
        sections.run("memory probe", probe)
        sections.run("reconcile", reconcile)
        sections.run(
            "catalog", lambda: results.update(catalog=catalog_read.measure(bench_db, databases.WORK_DIR, _say))
        )
    finally:
        databases.stop()
    print_finished(results, (print_reconcile, catalog_read.print_catalog))
    print(f"\nwritten to {sections.save()}\n{sections.summary()}")
    return 0 if sections.complete else 1


if __name__ == "__main__":
    sys.exit(main())
