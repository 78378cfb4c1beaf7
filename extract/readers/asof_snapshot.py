"""The as-of history's reader: a full snapshot of a table as of a date, from the source or from a file.

`python -m extract --table X --snapshot-date D` reads the whole source table (in key-range partitions,
like a full extract, resumable after a kill); `--snapshot-file PATH` reads a CSV or Parquet file
instead. Either lands the rows in the table's snap__ landing table under a new run, recorded in the
snapshot log; the history model applies landed snapshots, in any order of dates, at `dbt build`.
Its state is the snapshot's date: the input state is none (any date may land), the output its date.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import Path
from typing import TYPE_CHECKING

import psycopg

from extract.asof.clear import clear_snapshots
from extract.asof.file import read_snapshot_file
from extract.asof.file_check import check_snapshot_file
from extract.config.seeds import SyncTable
from extract.core.errors import KEY_PLACE, BatchRefused, KeyValueRefused, TidemarkError
from extract.core.observer import Observer
from extract.landing.progress_watch import ProgressCallback
from extract.landing.staging import duplicate_key_sample, ensure_snapshot_table, key_sample, rows_without_key
from extract.landing.transfer import land_frame, land_partitions
from extract.lifecycle.active_run import ActiveRun
from extract.lifecycle.journal import Journal, SnapshotJournal
from extract.lifecycle.reader import ReaderKind, RunLock
from extract.lifecycle.run import run_stream
from extract.partitions.plan import Partition, plan_partitions
from extract.planning.planner import Planner
from extract.planning.table_plan import TablePlan
from extract.readers.read_start import read_segments
from extract.readers.table_reader import TableReader
from extract.state.contract import StreamState
from extract.state.snapshot_log import FROM_SOURCE, SnapshotRecord

if TYPE_CHECKING:
    from pyspark.sql import DataFrame


@dataclass(frozen=True)
class SnapshotResult:
    table: str
    target: str
    run_id: int
    as_of: str
    origin: str
    rows_landed: int
    output_state: dict[str, object] | None = None
    migration_type: str = "snapshot"


def parse_snapshot_date(text: str) -> date:
    try:
        return date.fromisoformat(text)
    except ValueError:
        raise TidemarkError(f"--snapshot-date {text!r} is not a date; write it as YYYY-MM-DD") from None


@dataclass
class SnapshotReader(TableReader):
    as_of: date
    file: Path | None
    frame: DataFrame | None

    @property
    def origin(self) -> str:
        return str(self.file.resolve()) if self.file is not None else FROM_SOURCE

    @property
    def journal(self) -> Journal[SnapshotRecord]:
        return SnapshotJournal(self.state)

    @property
    def lock(self) -> RunLock:
        return RunLock(
            "snapshot:" + self.table_key, f"another snapshot of {self.table} is landing; try again when it ends"
        )

    @property
    def landing(self) -> tuple[str, str]:
        return self.plan.names.schema, self.plan.names.snapshot_table

    def prepare(self, conn: psycopg.Connection) -> None:
        ensure_snapshot_table(conn, self.plan.names, self.plan.columns)

    def input_state(self, conn: psycopg.Connection) -> StreamState | None:
        return None  # snapshots land in any order of dates: none depends on the one before

    def resume(
        self, conn: psycopg.Connection, killed: SnapshotRecord, input_state: StreamState | None
    ) -> SnapshotRecord | None:
        """A killed snapshot from the source, of the same date, goes on; a file is read again whole."""
        planned = killed.partitions_planned is not None  # killed while planning: nothing to go on with
        if planned and killed.as_of == self.as_of and killed.origin == self.origin == FROM_SOURCE:
            return self._record(killed.run_id, killed.started_at)
        return None

    def new_run(self, conn: psycopg.Connection, run_id: int, input_state: StreamState | None) -> SnapshotRecord:
        return self._record(run_id, datetime.now(UTC))

    def _record(self, run_id: int, started_at: datetime) -> SnapshotRecord:
        names = self.plan.names
        return SnapshotRecord(
            run_id, names.table_key, names.schema, names.snapshot_table, self.as_of, self.origin, started_at
        )

    def clear(self, conn: psycopg.Connection, keep: tuple[int, list[int]]) -> None:
        clear_snapshots(conn, self.state, self.plan.names, keep)

    def read(self, run: ActiveRun[SnapshotRecord]) -> None:
        if self.frame is not None:
            self._read_file(run, self.frame)
        else:
            self._read_source(run)
        self._check_batch(run.conn, run.record)

    def _read_file(self, run: ActiveRun[SnapshotRecord], frame: DataFrame) -> None:
        numbers = list(range(1, frame.rdd.getNumPartitions() + 1))
        run.plan([Partition(n, "file", None, None) for n in numbers], None)
        columns, record = self.plan.columns, run.record
        target = self.context.run_target(record.run_id)

        def land(pending: list[Partition], checkpoint: ProgressCallback, fetch_rows: int) -> None:
            # A file's Spark partitions are read whole again: a partition's rows land in one transaction.
            land_frame(frame, numbers, columns, target, self.landing, checkpoint)

        partitions, landed = run.load_plan()
        run.land(partitions, landed, land)

    def _read_source(self, run: ActiveRun[SnapshotRecord]) -> None:
        context, plan = self.context, self.plan
        parts = read_segments(context, plan, None)
        if not run.resumed:
            planned, rows = plan_partitions(
                context.source, context.dialect, context.table_ref(plan.table), parts, context.sizing
            )
            run.plan(planned, rows)
        partitions, landed = run.load_plan()
        run.record.partitions_planned = len(partitions)
        source, record = context.partition_source(plan.table, plan.columns), run.record
        target = context.run_target(record.run_id)

        def land(pending: list[Partition], checkpoint: ProgressCallback, fetch_rows: int) -> None:
            land_partitions(
                source.fetching(fetch_rows),
                parts,
                pending,
                plan.columns,
                target,
                self.landing,
                checkpoint,
            )

        run.land(partitions, landed, land)

    def _check_batch(self, conn: psycopg.Connection, record: SnapshotRecord) -> None:
        plan = self.plan
        if self.file is None and plan.table.key_enforced:
            return  # key ranges of an enforced key hold each key once
        keyless = rows_without_key(conn, self.landing, plan.key_columns, record.run_id)
        if keyless:
            raise BatchRefused(
                f"{self.table}: the snapshot as of {self.as_of} has {keyless} row(s) with no value in the key "
                f"({', '.join(plan.table.primary_key)}); every row of a snapshot needs its key"
            )
        duplicate = duplicate_key_sample(conn, self.landing, plan.key_columns, record.run_id)
        if duplicate is not None:
            raise KeyValueRefused(
                f"{self.table}: the snapshot as of {self.as_of} holds {KEY_PLACE} more than once; "
                "a snapshot must hold each key once",
                key_sample(plan.table.primary_key, duplicate),
            )

    def output_state(self, conn: psycopg.Connection, record: SnapshotRecord) -> StreamState:
        return StreamState(
            self.table_key, "_as_of", self.as_of.isoformat(), record.rows_landed, reader=ReaderKind.ASOF_SNAPSHOT
        )

    def commit(self, conn: psycopg.Connection, record: SnapshotRecord) -> None:
        return None  # the history model applies it at `dbt build`

    def discard(self, conn: psycopg.Connection, record: SnapshotRecord) -> None:
        clear_snapshots(conn, self.state, self.plan.names)


class SnapshotLanding:
    """A snapshot run of one table, checked whole before it starts: a wrong file leaves no trace."""

    def __init__(self, planner: Planner, config: SyncTable, as_of: date, file: Path | None) -> None:
        if not config.asof_history:
            raise TidemarkError(
                f"{config.key} keeps no as-of history: set asof_history to true for it in "
                "seeds/sync_tables.csv and run `python -m extract generate`"
            )
        context = planner.context
        self.plan: TablePlan = planner.plan(config)
        frame = None
        if file is not None:
            frame = read_snapshot_file(context.spark, file, self.plan.columns)
            check_snapshot_file(context.settings.target, frame, self.plan, file)
        self.reader = SnapshotReader(context, self.plan, as_of, file, frame)

    def run(self, observer: Observer) -> SnapshotResult:
        record = run_stream(self.reader.context, self.reader, observer)
        reader = self.reader
        return SnapshotResult(
            reader.table,
            reader.table_key,
            record.run_id,
            reader.as_of.isoformat(),
            reader.origin,
            record.rows_landed,
            record.output_state,
        )
