"""`python -m bench [--rows N]`: one run, same rows, every figure measured in it.

Starts its own PostgreSQL (durable, tuned for bulk loads, data under .tidemark/bench-pg), generates
bench.Items in a source database, then measures raw COPY, tidemark's full and
incremental syncs, dlt's and Sling's on the same workload, the three merge
strategies, reconciles of planted differences against reladiff, a key scan
and count(*), the catalog read of a pass over 1,000 tables, full and incremental, a pass over 1,000 small tables
against dlt and Sling (bench/wide.py), 1,000 CSV files landed by a file source against a raw COPY of them
(bench/files.py), and the deletes a Change Tracking sync brings against a sync and a reconcile
(bench/recorded_changes.py). Prints the
figures and writes them to bench/results/, section by section as each is measured: a section that
fails, or whose step runs past BENCH_STEP_BOUND seconds (an hour by default) and is stopped, is recorded
as such and the run goes on (bench/sections.py); the exit code is then 1.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Any

from bench import catalog_read, databases, files, recorded_changes, report, wide
from bench.peers import runner
from bench.reconcile_report import print_reconcile
from bench.report import print_build
from bench.sections import Sections, print_finished
from bench.single_table import SingleTable
from bench.tidemark_sync import REPO


def _say(text: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {text}", flush=True)


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    parser.add_argument("--rows", type=int, default=int(os.environ.get("BENCH_ROWS", "10000000")))
    parser.add_argument("--percent", type=int, default=1, help="share of rows changed for the incremental sync")
    parser.add_argument(
        "--rounds",
        type=int,
        default=3,
        help="raw COPYs, and incremental syncs (each of fresh changes) by tidemark as one command, then as many "
        "in one --every process; the peers sync in every round; the median of each counts",
    )
    parser.add_argument("--no-peers", action="store_true", help="leave dlt and Sling out")
    parser.add_argument(
        "--no-wide", action="store_true", help="leave out the section of 1,000 small tables (python -m bench.wide)"
    )
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "results")
    args = parser.parse_args()
    if args.rows < 1000 or not 1 <= args.percent <= 50 or args.rounds < 1:
        parser.error(
            f"--rows must be at least 1000 (not {args.rows}), --percent 1 to 50 (not {args.percent})"
            f" and --rounds at least 1 (not {args.rounds})"
        )
    missing = None if args.no_peers else runner.available()
    if missing:
        parser.error(f"the peers are not installed ({missing}): run `make bench`, or pass --no-peers")
    return args


def main() -> int:
    args = _arguments()
    work = databases.WORK_DIR
    bench_db = databases.start()
    results: dict[str, Any] = {
        "rows": args.rows,
        "percent_changed": args.percent,
        "machine": report.machine(),
        "postgres_settings": databases.server_settings(),
    }
    sections = Sections(results, args.out, _say)
    try:
        SingleTable(args, bench_db, results, sections).measure()
        sections.run("catalog", lambda: results.update(catalog=catalog_read.measure(bench_db, work, _say)))
        if not args.no_wide:
            wide_section = results.setdefault("wide", {})
            sections.run(
                "wide",
                lambda: wide.measure(
                    bench_db, work, _say, peers=not args.no_peers, section=wide_section, on_peer_failure=sections.record
                ),
            )
        file_section = results.setdefault("files", {})
        sections.run("files", lambda: files.measure(bench_db, work, _say, file_section))
        # Last: it makes the databases anew.
        changes = results.setdefault("recorded_changes", {})
        sections.run(
            "recorded changes",
            lambda: recorded_changes.measure(bench_db, work, args.rows, _say, args.percent, section=changes),
        )
    finally:
        databases.stop()
        print(f"\nwritten to {sections.save()}")
    printers = (
        report.print_report,
        print_reconcile,
        catalog_read.print_catalog,
        print_build,
        wide.print_wide,
        files.print_files,
    )
    print_finished(results, (*printers, recorded_changes.print_recorded_changes))
    print(f"\n{sections.summary()}")
    return 0 if sections.complete else 1


if __name__ == "__main__":
    sys.exit(main())
