"""A run between its begin and its end, as a reader sees it: plan partitions, then land the pending ones
with checkpoints, a transient failure tried again with backoff and a smaller page."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import Generic, TypeVar

import psycopg

from extract.core.errors import first_line
from extract.core.observer import Observer, PartitionLanded, Planned, Retrying
from extract.core.state_schema import StateSchema
from extract.landing.progress_watch import ProgressCallback
from extract.lifecycle.context import RunContext
from extract.lifecycle.journal import Journal
from extract.lifecycle.transient import is_transient
from extract.partitions.plan import Partition
from extract.state.partition_log import Progress, load_plan, progress, record_plan
from extract.state.run_log import RunRecord
from extract.state.snapshot_log import SnapshotRecord

R = TypeVar("R", RunRecord, SnapshotRecord)

#: Rows a partition read fetches at a time; a retry halves it, down to the floor.
FETCH_ROWS = 10_000
MIN_FETCH_ROWS = 100

#: The longest wait between two attempts, however many retries are allowed.
MAX_RETRY_WAIT = timedelta(minutes=5)

#: Lands the pending partitions, fetching `fetch_rows` at a time, calling back as each lands.
Lands = Callable[[list[Partition], ProgressCallback, int], None]


@dataclass
class ActiveRun(Generic[R]):
    conn: psycopg.Connection
    record: R
    resumed: bool
    context: RunContext
    journal: Journal[R]
    observer: Observer
    table: str
    #: Drops the landed rows of other runs, keeping partitions keep[1] of run keep[0].
    clear: Callable[[psycopg.Connection, tuple[int, list[int]]], None]

    @property
    def state(self) -> StateSchema:
        return self.context.settings.state_schema

    def plan(self, partitions: list[Partition], rows: int | None) -> None:
        """Record the partition plan, in one transaction with the checkpoint that announces it."""
        record = self.record
        record.partitions_planned, record.rows_planned = len(partitions), rows
        with self.conn.transaction():
            record_plan(self.conn, self.state, record.run_id, partitions)
            self.journal.checkpoint(self.conn, record)
        self.observer(Planned(self.table, record))

    def load_plan(self) -> tuple[list[Partition], set[int]]:
        """The run's partitions and those landed; other runs' rows that no merge needs are dropped."""
        partitions, landed = load_plan(self.conn, self.state, self.record.run_id)
        self.clear(self.conn, (self.record.run_id, sorted(landed)))
        return partitions, landed

    def land(self, partitions: list[Partition], landed: set[int], lands: Lands) -> None:
        """Land the partitions not landed yet. A transient failure is tried again (the partitions that
        landed meanwhile stay landed) after a backoff that doubles, with half the page; every retry is
        a checkpoint in the log. Any other failure, or the last, fails the run."""
        settings = self.context.settings
        record, fetch_rows, attempt = self.record, FETCH_ROWS, 0
        pending = [p for p in partitions if p.number not in landed]
        while pending:
            try:
                lands(pending, self._checkpoint, fetch_rows)
                break
            except Exception as exc:
                attempt += 1
                if attempt > settings.read_retries or not is_transient(exc):
                    raise
                wait = min(MAX_RETRY_WAIT, settings.retry_backoff * 2 ** (attempt - 1))
                fetch_rows = max(MIN_FETCH_ROWS, fetch_rows // 2)
                error = first_line(exc)
                self._retrying(attempt, wait, fetch_rows, error)
                time.sleep(wait.total_seconds())
            landed = load_plan(self.conn, self.state, record.run_id)[1]
            pending = [p for p in partitions if p.number not in landed]
        self._record_progress(progress(self.conn, self.state, record.run_id))

    def _retrying(self, attempt: int, wait: timedelta, fetch_rows: int, error: str) -> None:
        record, attempts = self.record, self.context.settings.read_retries
        self._record_progress(progress(self.conn, self.state, record.run_id))
        record.error_message = (
            f"retry {attempt} of {attempts} in {wait.total_seconds():g}s, {fetch_rows:,} rows a fetch, after: {error}"
        )
        self.journal.checkpoint(self.conn, record)
        self.observer(Retrying(self.table, record, attempt, attempts, wait, error))
        record.error_message = None  # the retry is logged once; the checkpoints after it are the run's own

    def _checkpoint(self, watch_conn: psycopg.Connection, current: Progress) -> None:
        self._record_progress(current)
        self.journal.checkpoint(watch_conn, self.record)  # the status stays 'running'
        self.observer(PartitionLanded(self.table, self.record))

    def _record_progress(self, current: Progress) -> None:
        record = self.record
        record.partitions_landed, record.rows_landed = current.partitions_landed, current.rows_landed
        record.partition_positions = current.last_position
