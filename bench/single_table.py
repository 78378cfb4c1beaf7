"""The sections of `make bench` on one table of N rows: the driver's memory, raw COPY (the baseline),
tidemark's and the peers' full syncs, the incremental rounds, the merge strategies and the reconcile of
planted differences. Each puts its figures in the run's results as it finishes (bench/sections.py)."""

from __future__ import annotations

import argparse
import statistics
from dataclasses import asdict
from functools import partial
from pathlib import Path
from typing import Any

import psycopg

from bench import baseline, databases, merge_strategies, reconcile_rounds, report, workload
from bench.databases import SOURCE_DB, BenchDatabases
from bench.measure import Measured
from bench.peers import runner
from bench.peers.runner import PeerSync
from bench.rounds import IncrementalRounds
from bench.sections import Sections
from bench.tidemark_sync import Sync, TidemarkProject

PEERS = (runner.Dlt, runner.Sling)
FULL = "tidemark full sync"
ROUNDS = "incremental rounds"


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


class SingleTable:
    """The one-table sections of a run, measured into `results` through `sections`."""

    def __init__(
        self, args: argparse.Namespace, bench_db: BenchDatabases, results: dict[str, Any], sections: Sections
    ) -> None:
        self.args = args
        self.bench_db = bench_db
        self.results = results
        self.sections = sections
        self.say = sections.say
        self.work: Path = databases.WORK_DIR
        self.project: TidemarkProject | None = None
        self.memory: list[dict[str, Any]] = []
        self.peers: list[Any] = []
        self.peer_full: dict[str, PeerSync] = {}

    def measure(self) -> None:
        run = self.sections.run
        run("memory probe", self._memory_probe)
        if not run("baseline", self._baseline):
            return  # every section after it reads the rows it generates
        run(FULL, self._full)
        # Before the rounds change the replica in every key range; the reconcile's levels come after them.
        run("first reconcile", self._first_reconcile, needs=[FULL])
        for kind in () if self.args.no_peers else PEERS:
            peer = kind(self.work, self.bench_db.source_url, self.bench_db.target_url)
            if run(f"{peer.name} full sync", partial(self._peer_full, peer)):
                self.peers.append(peer)
        run(ROUNDS, self._rounds, needs=[FULL])
        run("merge strategies", self._merge_strategies, needs=[FULL])
        run("reconcile", self._reconcile, needs=[FULL])

    def _memory_probe(self) -> None:
        """A full sync of a tenth of the rows in a fresh project: the peak memory of its processes."""
        rows = max(1000, self.args.rows // 10)
        self.say(f"memory probe: full sync of {rows:,} rows")
        self.bench_db.recreate()
        with psycopg.connect(self.bench_db.source_url, autocommit=True) as conn:
            workload.create(conn, rows)
        project = TidemarkProject(self.work / "tidemark-probe", self.bench_db.env, self.bench_db.target_url)
        probe = _memory(rows, project.sync().command)
        self.memory.append(probe)
        self.results["driver_memory"] = self.memory
        probe.update(reconcile_rounds.memory_figures(reconcile_rounds.memory_probe(project, self.bench_db, rows)))

    def _baseline(self) -> None:
        """The source rows, then raw COPY. The baseline divides every ratio, and one COPY of a few seconds
        varies by a third between runs on a shared machine: it is measured as often as the incrementals,
        its median counts."""
        args, bench_db = self.args, self.bench_db
        bench_db.recreate()
        self.say(f'generating {args.rows:,} rows in {SOURCE_DB}.bench."Items"')
        with psycopg.connect(bench_db.source_url, autocommit=True) as conn:
            workload.create(conn, args.rows)
            version = conn.execute("show server_version").fetchone()
        self.results["machine"]["postgres"] = version[0] if version else "?"
        self.say(f"raw COPY FROM STDIN into an UNLOGGED table (the baseline), {args.rounds} times")
        copied, rounds = baseline.raw_copy_seconds(
            bench_db.source_url, bench_db.target_url, self.work, args.rounds, bench_db.settle
        )
        seconds = statistics.median(rounds)
        self.results["raw_copy"] = {
            "rows": copied,
            "seconds": seconds,
            "rows_per_second": report.rate(copied, seconds),
            "rounds_seconds": rounds,
        }

    def _full(self) -> None:
        self.say("tidemark: full first sync (extract, then dbt run of the replica in its process)")
        self.project = TidemarkProject(self.work / "tidemark", self.bench_db.env, self.bench_db.target_url)
        self.bench_db.settle()
        full = self.project.sync()
        self.memory.append(_memory(self.args.rows, full.command))
        self.results["driver_memory"] = self.memory
        self.results["tidemark"] = {
            "full": {**_sync_figures(full), "rows_per_second": report.rate(self.args.rows, full.seconds)},
            "landing_seconds": full.landing_seconds,
            "landing_rows_per_second": report.rate(full.rows_landed, full.landing_seconds),
        }

    def _first_reconcile(self) -> None:
        assert self.project is not None
        self.say("reconcile: the first one of the fresh replica")
        seconds = reconcile_rounds.nothing_planted_seconds(self.project, self.bench_db)
        self.results["reconcile"] = {"first_seconds": seconds}

    def _peer_full(self, peer: Any) -> None:
        self.say(f"{peer.name}: full first sync")
        self.bench_db.settle()
        self.peer_full[peer.name] = peer.sync()
        self.results.setdefault("peers", {})[peer.name] = {
            "name": peer.name,
            "full": {"seconds": self.peer_full[peer.name].measured.seconds},
        }

    def _rounds(self) -> None:
        assert self.project is not None
        rounds = IncrementalRounds(
            self.project, self.peers, self.bench_db, self.args.percent, self.say, self.sections.record
        )
        rounds.run(self.args.rounds)
        self.results["rows_changed"] = rounds.changed
        self.results["tidemark"].update(
            {
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
            }
        )
        for name, seconds in rounds.theirs.items():
            if seconds:
                self.results["peers"][name]["incremental"] = {
                    "seconds": statistics.median_low(seconds),
                    "rounds_seconds": seconds,
                }

    def _merge_strategies(self) -> None:
        assert self.project is not None
        self.say("merge strategies on a batch of every row")
        env, url = self.bench_db.env, self.bench_db.target_url
        compared = merge_strategies.compare(self.work, env, url, self.project.replica(), self.args.percent)
        self.results["merge_strategies"] = [asdict(r) for r in compared]

    def _reconcile(self) -> None:
        assert self.project is not None
        self.say("reconcile: differences a cursor cannot see, found and repaired")
        section: dict[str, Any] = self.results.setdefault("reconcile", {})
        reconcile_rounds.measure(
            self.project,
            self.bench_db,
            self.args.rows,
            self.say,
            peers=not self.args.no_peers,
            section=section,
            on_peer_failure=self.sections.record,
            after_changes=True,
        )
        if self.memory:
            self.memory[-1].update(reconcile_rounds.memory_figures(reconcile_rounds.level_peaks(section)))
