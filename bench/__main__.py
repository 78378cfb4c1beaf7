"""`python -m bench [--rows N]`: one run, same rows, every figure measured in it.

Starts its own PostgreSQL (durable, tuned for bulk loads, data under .tidemark/bench-pg), generates
bench.Items in a source database, then measures raw COPY, tidemark's full and
incremental syncs, dlt's and Sling's on the same workload, the three merge
strategies, reconciles of planted differences against reladiff, a key scan
and count(*), the catalog read of a pass over 1,000 tables, full and incremental, a pass over 1,000 small tables
against dlt and Sling (bench/wide.py), and the deletes a Change Tracking sync brings against a sync and a
reconcile (bench/recorded_changes.py). Prints the
figures and writes them to bench/results/.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

import psycopg

from bench import (
    baseline,
    catalog_read,
    databases,
    merge_strategies,
    reconcile_rounds,
    recorded_changes,
    report,
    wide,
    workload,
)
from bench.databases import SOURCE_DB, BenchDatabases
from bench.measure import Measured
from bench.peers import runner
from bench.reconcile_report import print_reconcile
from bench.report import print_build
from bench.rounds import IncrementalRounds
from bench.tidemark_sync import REPO, Sync, TidemarkProject

PEERS = (runner.Dlt, runner.Sling)


def _say(text: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {text}", flush=True)


def _sync_figures(sync: Sync) -> dict[str, Any]:
    return {
        "seconds": sync.seconds,
        "landing_seconds": sync.landing_seconds,
        "merge_statement_seconds": sync.merge_seconds,
        "rows_landed": sync.rows_landed,
        "rows_inserted": sync.rows_inserted,
        "rows_updated": sync.rows_updated,
        "rows_unchanged": sync.rows_unchanged,
        "peak_rss_driver": sync.command.peak_rss_main,
        "peak_rss_children": sync.command.peak_rss_children,
    }


def _median_round(syncs: list[Sync]) -> dict[str, Any]:
    """The median round's figures, and every round's time. With an even count, the slower middle round
    (the peers' figure is the faster one: `statistics.median_low`)."""
    median = sorted(syncs, key=lambda sync: sync.seconds)[len(syncs) // 2]
    return {**_sync_figures(median), "rounds_seconds": [sync.seconds for sync in syncs]}


def _memory(rows: int, extracted: Measured) -> dict[str, Any]:
    return {"rows": rows, "peak_rss_driver": extracted.peak_rss_main, "peak_rss_children": extracted.peak_rss_children}


def _memory_probe(work: Path, databases: BenchDatabases, rows: int) -> dict[str, Any]:
    """A full sync of `rows` rows in a fresh project: the peak memory of its processes."""
    databases.recreate()
    with psycopg.connect(databases.source_url, autocommit=True) as conn:
        workload.create(conn, rows)
    project = TidemarkProject(work / "tidemark-probe", databases.env, databases.target_url)
    probe = _memory(rows, project.sync().command)
    probe["reconcile_peak_rss_driver"] = reconcile_rounds.memory_probe(project, databases, rows)
    return probe


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


def _baseline(args: argparse.Namespace, bench_db: BenchDatabases, results: dict[str, Any]) -> None:
    """The source rows, then raw COPY. The baseline divides every ratio, and one COPY of a few seconds
    varies by a third between runs on a shared machine: it is measured as often as the incrementals, its
    median counts."""
    bench_db.recreate()
    _say(f'generating {args.rows:,} rows in {SOURCE_DB}.bench."Items"')
    with psycopg.connect(bench_db.source_url, autocommit=True) as conn:
        workload.create(conn, args.rows)
        version = conn.execute("show server_version").fetchone()
    results["machine"]["postgres"] = version[0] if version else "?"
    _say(f"raw COPY FROM STDIN into an UNLOGGED table (the baseline), {args.rounds} times")
    work = databases.WORK_DIR
    copied, rounds = baseline.raw_copy_seconds(
        bench_db.source_url, bench_db.target_url, work, args.rounds, bench_db.settle
    )
    seconds = statistics.median(rounds)
    results["raw_copy"] = {
        "rows": copied,
        "seconds": seconds,
        "rows_per_second": report.rate(copied, seconds),
        "rounds_seconds": rounds,
    }


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
    try:
        small = max(1000, args.rows // 10)
        _say(f"memory probe: full sync of {small:,} rows")
        memory = [_memory_probe(work, bench_db, small)]
        _baseline(args, bench_db, results)

        _say("tidemark: full first sync (extract, then dbt run of the replica in its process)")
        project = TidemarkProject(work / "tidemark", bench_db.env, bench_db.target_url)
        bench_db.settle()
        full = project.sync()
        memory.append(_memory(args.rows, full.command))
        results["driver_memory"] = memory

        peers = [] if args.no_peers else [kind(work, bench_db.source_url, bench_db.target_url) for kind in PEERS]
        peer_full = {}
        for peer in peers:
            _say(f"{peer.name}: full first sync")
            bench_db.settle()
            peer_full[peer.name] = peer.sync()

        rounds = IncrementalRounds(project, peers, bench_db, args.percent, _say)
        rounds.run(args.rounds)
        results["rows_changed"] = rounds.changed
        results["tidemark"] = {
            "full": {**_sync_figures(full), "rows_per_second": report.rate(args.rows, full.seconds)},
            "incremental": _median_round(rounds.ours["command"]),
            "incremental_every": _median_round(rounds.ours["every"]),
            "incremental_build": _median_round(rounds.ours["build"]),
            "nothing_changed_build": {
                "seconds": statistics.median(rounds.quiet["build"]),
                "rounds_seconds": rounds.quiet["build"],
                "past_window_seconds": statistics.median(rounds.quiet["build_past_window"]),
                "past_window_rounds_seconds": rounds.quiet["build_past_window"],
                "process_start_seconds": statistics.median(rounds.quiet["process_start"]),
                "process_start_rounds_seconds": rounds.quiet["process_start"],
            },
            "landing_seconds": full.landing_seconds,
            "landing_rows_per_second": report.rate(full.rows_landed, full.landing_seconds),
        }
        results["peers"] = {
            peer.name: {
                "name": peer.name,
                "full": {"seconds": peer_full[peer.name].measured.seconds},
                "incremental": {
                    "seconds": statistics.median_low(rounds.theirs[peer.name]),
                    "rounds_seconds": rounds.theirs[peer.name],
                },
            }
            for peer in peers
        }

        _say("merge strategies on a batch of every row")
        results["merge_strategies"] = [
            asdict(r)
            for r in merge_strategies.compare(work, bench_db.env, bench_db.target_url, project.replica(), args.percent)
        ]
        _say("reconcile: differences a cursor cannot see, found and repaired")
        results["reconcile"] = reconcile_rounds.measure(project, bench_db, args.rows, _say, peers=not args.no_peers)
        peaks = [level["tidemark_peak_rss_driver"] for level in results["reconcile"]["levels"]]
        memory[-1]["reconcile_peak_rss_driver"] = max(peaks)
        results["catalog"] = catalog_read.measure(bench_db, work, _say)
        if not args.no_wide:
            results["wide"] = wide.measure(bench_db, work, _say, peers=not args.no_peers)
        # Last: it makes the databases anew.
        results["recorded_changes"] = recorded_changes.measure(bench_db, work, args.rows, _say, args.percent)
    except Exception as exc:
        # An hour of measuring is not thrown away with the step that failed.
        results["failed"] = f"{type(exc).__name__}: {exc}"
        print(f"\nthe bench failed; what it measured before is in {report.write(results, args.out, 'failed')}")
        raise
    finally:
        databases.stop()
    report.print_report(results)
    print_reconcile(results)
    catalog_read.print_catalog(results)
    print_build(results)
    wide.print_wide(results)
    recorded_changes.print_recorded_changes(results)
    path = report.write(results, args.out)
    print(f"\nwritten to {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
