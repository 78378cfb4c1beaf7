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
    try:
        small = args.rows // 10
        probe = _synced(bench_db, small, "tidemark-probe")
        memory = [{"rows": small, "reconcile_peak_rss_driver": reconcile_rounds.memory_probe(probe, bench_db, small)}]
        project = _synced(bench_db, args.rows, "tidemark")
        results["reconcile"] = reconcile_rounds.measure(project, bench_db, args.rows, _say)
        peaks = [level["tidemark_peak_rss_driver"] for level in results["reconcile"]["levels"]]
        memory.append({"rows": args.rows, "reconcile_peak_rss_driver": max(peaks)})
        results["driver_memory"] = memory
        results["catalog"] = catalog_read.measure(bench_db, databases.WORK_DIR, _say)
    finally:
        databases.stop()
    print_reconcile(results)
    catalog_read.print_catalog(results)
    print(f"\nwritten to {report.write(results, args.out, f'reconcile-{args.rows}')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
