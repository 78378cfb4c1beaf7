"""Where a run's events are written: the run log (syncs and reconciles) or the snapshot log (as-of snapshots).

The lifecycle (extract/lifecycle/run.py) writes through this protocol only, so that beginning, resuming,
checkpointing and ending a run are written once for every reader.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, TypeVar

import psycopg

from extract.core.state_schema import StateSchema
from extract.state import snapshot_log
from extract.state.run_log import RunRecord, append_event, interrupted_run
from extract.state.snapshot_log import SnapshotRecord

R = TypeVar("R", RunRecord, SnapshotRecord)


class Journal(Protocol[R]):
    def interrupted(self, conn: psycopg.Connection, table_key: str) -> R | None:
        """The table's run that was killed while it read, if its latest one was."""

    def begin(self, conn: psycopg.Connection, record: R) -> None: ...

    def checkpoint(self, conn: psycopg.Connection, record: R) -> None:
        """The run's progress as it stands; its status stays 'running'."""

    def end(self, conn: psycopg.Connection, record: R) -> None:
        """'landed' (serialised with the table's merges), 'failed', or a reconcile's 'exact' or 'reported'."""

    def abandon(self, conn: psycopg.Connection, record: R, by_run: int) -> None:
        """A killed run that is not resumed: failed, so that nothing waits on it."""


@dataclass(frozen=True)
class RunLogJournal:
    state: StateSchema

    def interrupted(self, conn: psycopg.Connection, table_key: str) -> RunRecord | None:
        return interrupted_run(conn, self.state, table_key)

    def begin(self, conn: psycopg.Connection, record: RunRecord) -> None:
        append_event(conn, self.state, record)

    def checkpoint(self, conn: psycopg.Connection, record: RunRecord) -> None:
        append_event(conn, self.state, record)

    def end(self, conn: psycopg.Connection, record: RunRecord) -> None:
        append_event(conn, self.state, record)

    def abandon(self, conn: psycopg.Connection, record: RunRecord, by_run: int) -> None:
        record.status, record.error_message = "failed", f"interrupted; superseded by run {by_run}"
        append_event(conn, self.state, record)


@dataclass(frozen=True)
class SnapshotJournal:
    state: StateSchema

    def interrupted(self, conn: psycopg.Connection, table_key: str) -> SnapshotRecord | None:
        return snapshot_log.interrupted(conn, self.state, table_key)

    def begin(self, conn: psycopg.Connection, record: SnapshotRecord) -> None:
        snapshot_log.begin(conn, self.state, record)

    def checkpoint(self, conn: psycopg.Connection, record: SnapshotRecord) -> None:
        snapshot_log.checkpoint(conn, self.state, record)

    def end(self, conn: psycopg.Connection, record: SnapshotRecord) -> None:
        snapshot_log.finish(conn, self.state, record)

    def abandon(self, conn: psycopg.Connection, record: SnapshotRecord, by_run: int) -> None:
        snapshot_log.abandon(conn, self.state, record.run_id, by_run)
