"""The contract between the lifecycle and a way of reading a table (seed 001's connector contract).

A reader is given the stream's input state (what the registry committed) and says what to read and
what output state a success commits; it keeps no state between runs. The lifecycle
(extract/lifecycle/run.py) does the rest: lock, begin or resume, checkpoints, retries, the end.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Protocol, TypeVar

import psycopg

from extract.lifecycle.active_run import ActiveRun
from extract.lifecycle.journal import Journal
from extract.state.contract import StreamState
from extract.state.run_log import RunRecord
from extract.state.snapshot_log import SnapshotRecord

R = TypeVar("R", RunRecord, SnapshotRecord)


class ReaderKind(StrEnum):
    CLOCK_WATERMARK = "clock_watermark"
    MODIFY_ID = "modify_id"
    CHANGE_TRACKING = "change_tracking"
    CDC = "cdc"
    FULL_REFRESH = "full_refresh"
    ASOF_SNAPSHOT = "asof_snapshot"
    RECONCILE_REPAIRS = "reconcile_repairs"
    FILES = "files"


@dataclass(frozen=True)
class RunLock:
    """The advisory lock a run holds for its life, and what is said when another run holds it."""

    key: str
    busy: str


class Reader(Protocol[R]):
    @property
    def table(self) -> str:
        """The table as the seed names it (messages, events)."""

    @property
    def table_key(self) -> str:
        """The replica as the target keys it (logs, registry)."""

    @property
    def lock(self) -> RunLock: ...

    @property
    def journal(self) -> Journal[R]: ...

    def prepare(self, conn: psycopg.Connection) -> None:
        """Under the lock, before a run begins: the landing tables, the replica's schema."""

    def resume(self, conn: psycopg.Connection, killed: R, input_state: StreamState | None) -> R | None:
        """The killed run to go on with (same input state, same partitions), or None to start anew."""

    def new_run(self, conn: psycopg.Connection, run_id: int, input_state: StreamState | None) -> R:
        """A run reading from `input_state`: what it reads is recorded before it reads."""

    def input_state(self, conn: psycopg.Connection) -> StreamState | None:
        """What the registry committed for the stream (None: nothing yet)."""

    def clear(self, conn: psycopg.Connection, keep: tuple[int, list[int]]) -> None:
        """Drop the landed rows no merge will take, except partitions `keep[1]` of run `keep[0]`."""

    def read(self, run: ActiveRun[R]) -> None:
        """Plan, land, and check the batch; raises to fail the run."""

    def output_state(self, conn: psycopg.Connection, record: R) -> StreamState | None:
        """What a success commits for the stream, once merged."""

    def commit(self, conn: psycopg.Connection, record: R) -> None:
        """In the transaction that ends the run 'landed', serialised with the table's merges."""

    def discard(self, conn: psycopg.Connection, record: R) -> None:
        """After a failure: what the run landed is dropped."""
