"""The incremental rounds: a few seconds each, so noise weighs more than on the full syncs. Every tool syncs
each of a few rounds of fresh changes, and the median round counts (every round is kept in the results).
tidemark syncs the first rounds as one command each, then as many in one `--every` process."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import psycopg

from bench import workload
from bench.databases import BenchDatabases
from bench.measure import count_rows
from bench.tidemark_sync import Sync, SyncLoop, TidemarkProject


class IncrementalRounds:
    def __init__(
        self,
        project: TidemarkProject,
        peers: Sequence[Any],
        bench_db: BenchDatabases,
        percent: int,
        say: Callable[[str], None],
    ) -> None:
        self.project = project
        self.peers = peers
        self.bench_db = bench_db
        self.percent = percent
        self.say = say
        self.changed = 0
        self.ours: dict[str, list[Sync]] = {"command": [], "every": []}
        self.theirs: dict[str, list[float]] = {peer.name: [] for peer in peers}
        schema, table = project.replica()
        self._replica = f'"{schema}"."{table}"'

    def run(self, rounds: int) -> None:
        total = 2 * rounds
        loop: SyncLoop | None = None
        try:
            for number in range(1, total + 1):
                if number > rounds and loop is None:
                    self.say(
                        "tidemark: starting `extract --every` (its first sync, of nothing new, loads Spark and dbt)"
                    )
                    loop = SyncLoop(self.project)
                self._round(number, total, loop)
        finally:
            if loop is not None:
                loop.stop()

    def _round(self, number: int, total: int, loop: SyncLoop | None) -> None:
        self.say(f"round {number}/{total}: changing {self.percent}% of the source rows")
        with psycopg.connect(self.bench_db.source_url, autocommit=True) as conn:
            self.changed = workload.change(conn, self.percent)
        self.say("vacuum and analyse of both databases, as autovacuum leaves them between syncs")
        self.bench_db.settle(vacuum=True)
        how = "one command" if loop is None else "a sync of the --every process"
        self.say(f"round {number}/{total}: tidemark: incremental sync, {how}")
        incremental = self.project.sync() if loop is None else loop.sync()
        if incremental.rows_updated != self.changed:
            updated = incremental.rows_updated
            raise RuntimeError(f"tidemark updated {updated:,} rows, the source changed {self.changed:,}")
        self.ours["command" if loop is None else "every"].append(incremental)
        source_rows = count_rows(self.bench_db.source_url, 'bench."Items"')
        held_by_replica = count_rows(self.bench_db.target_url, self._replica)
        if held_by_replica != source_rows:
            raise RuntimeError(f"the replica holds {held_by_replica:,} rows, the source {source_rows:,}")
        for peer in self.peers:
            self.say(f"round {number}/{total}: {peer.name}: incremental sync")
            self.bench_db.settle()
            second = peer.sync()
            if second.rows_in_target != source_rows:
                held = second.rows_in_target
                raise RuntimeError(f"{peer.name} holds {held:,} rows, the source {source_rows:,}")
            self.theirs[peer.name].append(second.measured.seconds)
