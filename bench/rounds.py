"""The incremental rounds: a few seconds each, so noise weighs more than on the full syncs. Every tool syncs
each of a few rounds of fresh changes, and the median round counts (every round is kept in the results).
tidemark syncs the first rounds as one command each with the merge alone, then as many with the README's
`--all --dbt build` (the history and tests too), then as many in one `--every` process. Then the README's
command with nothing changed, against the start of a process that does nothing."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import psycopg

from bench import workload
from bench.databases import BenchDatabases
from bench.measure import count_rows
from bench.tidemark_sync import BUILD, Sync, SyncLoop, TidemarkProject


class IncrementalRounds:
    def __init__(
        self,
        project: TidemarkProject,
        peers: Sequence[Any],
        bench_db: BenchDatabases,
        percent: int,
        say: Callable[[str], None],
        on_peer_failure: Callable[[str, Exception], None],
    ) -> None:
        self.project = project
        #: The peers still syncing: one that fails is reported to `on_peer_failure` and left out after.
        self.peers = list(peers)
        self.on_peer_failure = on_peer_failure
        self.bench_db = bench_db
        self.percent = percent
        self.say = say
        self.changed = 0
        self.ours: dict[str, list[Sync]] = {"command": [], "build": [], "every": []}
        #: The README's command with nothing changed (within the safety window of the last change, then as
        #: when the window has passed), and `python -m extract --help`: seconds of each round.
        self.quiet: dict[str, list[float]] = {"build": [], "build_past_window": [], "process_start": []}
        self.theirs: dict[str, list[float]] = {peer.name: [] for peer in peers}
        schema, table = project.replica()
        self._replica = f'"{schema}"."{table}"'

    def run(self, rounds: int) -> None:
        total = 3 * rounds
        loop: SyncLoop | None = None
        try:
            for number in range(1, total + 1):
                if number == rounds + 1:
                    # dbt's own build of every node: the first history is a copy of the whole replica, which no
                    # timed round should pay. A pass would build nothing here, with no table landed.
                    self.say("tidemark: `dbt build` of the history and tests as they stand, before the timed builds")
                    self.project.command("dbt", BUILD)
                if number > 2 * rounds and loop is None:
                    self.say(
                        "tidemark: starting `extract --every` (its first sync, of nothing new, loads Spark and dbt)"
                    )
                    loop = SyncLoop(self.project)
                self._round(number, total, loop, "build" if rounds < number <= 2 * rounds else "command")
        finally:
            if loop is not None:
                loop.stop()
        for _ in range(rounds):
            self.bench_db.settle()
            self.say("tidemark: the README's command with nothing changed, then a process start alone")
            self.quiet["build"].append(self.project.command("--all", "--dbt", BUILD).seconds)
            # The rows changed within the window (5 minutes by default) are read again, for late commits;
            # a window of 0 is the pass once it has gone by, without waiting for it.
            past = self.project.command("--all", "--dbt", BUILD, "--safety-window", "0s")
            self.quiet["build_past_window"].append(past.seconds)
            self.quiet["process_start"].append(self.project.command("--help").seconds)

    def _round(self, number: int, total: int, loop: SyncLoop | None, how: str) -> None:
        self.say(f"round {number}/{total}: changing {self.percent}% of the source rows")
        with psycopg.connect(self.bench_db.source_url, autocommit=True) as conn:
            self.changed = workload.change(conn, self.percent)
        self.say("vacuum and analyse of both databases, as autovacuum leaves them between syncs")
        self.bench_db.settle(vacuum=True)
        said = {"command": "one command, the merge alone", "build": "one command, --all --dbt build"}
        said_how = "a sync of the --every process" if loop is not None else said[how]
        self.say(f"round {number}/{total}: tidemark: incremental sync, {said_how}")
        if loop is not None:
            incremental = loop.sync()
        else:
            incremental = self.project.sync() if how == "command" else self.project.sync_all(BUILD)
        if incremental.rows_updated != self.changed:
            updated = incremental.rows_updated
            raise RuntimeError(f"tidemark updated {updated:,} rows, the source changed {self.changed:,}")
        self.ours[how if loop is None else "every"].append(incremental)
        source_rows = count_rows(self.bench_db.source_url, 'bench."Items"')
        held_by_replica = count_rows(self.bench_db.target_url, self._replica)
        if held_by_replica != source_rows:
            raise RuntimeError(f"the replica holds {held_by_replica:,} rows, the source {source_rows:,}")
        for peer in list(self.peers):
            self.say(f"round {number}/{total}: {peer.name}: incremental sync")
            self.bench_db.settle()
            try:
                second = peer.sync()
                if second.rows_in_target != source_rows:
                    held = second.rows_in_target
                    raise RuntimeError(f"{peer.name} holds {held:,} rows, the source {source_rows:,}")
            except Exception as exc:
                self.on_peer_failure(f"{peer.name} incremental round {number}", exc)
                self.peers.remove(peer)
                continue
            self.theirs[peer.name].append(second.measured.seconds)
