"""Land a full snapshot of a table, as of a date, for its as-of history.

`python -m extract --table X --snapshot-date D` reads the whole source table (in
key-range partitions, like a full extract, resumable after a kill);
`--snapshot-file PATH` reads a CSV or Parquet file instead. Either lands the rows in
the table's snap__ landing table under a new run, recorded in _migration.snapshot_log;
the history model applies landed snapshots, in any order of dates, at `dbt build`.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import Path

import psycopg

from extract.asof import log as snapshot_log
from extract.asof.file import read_snapshot_file
from extract.asof.file_check import check_snapshot_file
from extract.asof.log import FROM_SOURCE, SnapshotRecord
from extract.config.seeds import SyncTable
from extract.core.errors import BatchRefused, TidemarkError, first_line
from extract.core.observer import Observer
from extract.landing.staging import duplicate_key_sample, ensure_snapshot_table, key_sample, rows_without_key
from extract.landing.transfer import land_frame, land_partitions
from extract.partitions.plan import Partition, plan_partitions
from extract.planning.planner import Planner
from extract.planning.table_plan import TablePlan
from extract.state.partition_log import Progress, load_plan, progress, record_plan
from extract.state.run_log import ensure_state_schema, next_run_id, try_extract_lock


@dataclass(frozen=True)
class SnapshotResult:
    table: str
    target: str
    run_id: int
    as_of: str
    origin: str
    rows_landed: int
    migration_type: str = "snapshot"


def parse_snapshot_date(text: str) -> date:
    try:
        return date.fromisoformat(text)
    except ValueError:
        raise TidemarkError(f"--snapshot-date {text!r} is not a date; write it as YYYY-MM-DD") from None


class SnapshotLanding:
    """One snapshot run of one table, from the source or from a file."""

    def __init__(self, planner: Planner, config: SyncTable, as_of: date, file: Path | None) -> None:
        if not config.asof_history:
            raise TidemarkError(
                f"{config.key} keeps no as-of history: set asof_history to true for it in "
                "seeds/sync_tables.csv and run `python -m extract generate`"
            )
        self.planner = planner
        self.config = config
        self.as_of = as_of
        self.file = file
        self.origin = str(file.resolve()) if file is not None else FROM_SOURCE
        self.plan: TablePlan = planner.plan(config)
        # A file is checked whole before a run starts: a wrong one leaves no trace.
        self.frame = None
        if file is not None:
            self.frame = read_snapshot_file(planner.spark, file, self.plan.columns)
            check_snapshot_file(planner.settings.target, self.frame, self.plan, file)

    @property
    def landing(self) -> tuple[str, str]:
        return self.plan.names.schema, self.plan.names.snapshot_table

    def run(self, observer: Observer) -> SnapshotResult:
        names = self.plan.names
        with psycopg.connect(self.planner.settings.target.libpq_url, autocommit=False) as conn:
            ensure_state_schema(conn)
            if not try_extract_lock(conn, "snapshot:" + names.table_key):
                raise TidemarkError(f"another snapshot of {self.config.key} is landing; try again when it ends")
            conn.commit()
            ensure_snapshot_table(conn, names, self.plan.columns)
            record, resumed = self._begin(conn)
            observer("snapshot", {"table": self.config.key, "run": record, "resumed": resumed})
            try:
                self._land(conn, record, resumed, observer)
                record.status = "landed"
                snapshot_log.finish(conn, record)
            except Exception as exc:
                conn.rollback()
                record.status = "failed"
                record.error_message = first_line(exc)
                snapshot_log.finish(conn, record)
                snapshot_log.clear_snapshots(conn, names)
                observer("failed", {"table": self.config.key, "run": record})
                raise
        observer("snapshot-landed", {"table": self.config.key, "run": record})
        return SnapshotResult(
            self.config.key, names.table_key, record.run_id, self.as_of.isoformat(), self.origin, record.rows_landed
        )

    def _begin(self, conn: psycopg.Connection) -> tuple[SnapshotRecord, bool]:
        """A new run, or the killed run of the same snapshot from the source, to go on with."""
        names = self.plan.names
        killed = snapshot_log.interrupted(conn, names.table_key)
        if killed is not None:
            run_id, as_of, origin, started_at = killed
            if as_of == self.as_of and origin == self.origin == FROM_SOURCE:
                return self._record(run_id, started_at), True
            snapshot_log.abandon(conn, run_id)
        snapshot_log.clear_snapshots(conn, names)
        record = self._record(next_run_id(conn), datetime.now(UTC))
        conn.commit()
        snapshot_log.begin(conn, record)
        return record, False

    def _record(self, run_id: int, started_at: datetime) -> SnapshotRecord:
        names = self.plan.names
        return SnapshotRecord(
            run_id, names.table_key, names.schema, names.snapshot_table, self.as_of, self.origin, started_at
        )

    def _land(self, conn: psycopg.Connection, record: SnapshotRecord, resumed: bool, observer: Observer) -> None:
        def checkpoint(_: psycopg.Connection, current: Progress) -> None:
            record.partitions_landed, record.rows_landed = current.partitions_landed, current.rows_landed
            observer("partition", {"table": self.config.key, "run": record})

        target = self.planner.settings.target
        if self.frame is not None:
            numbers = list(range(1, self.frame.rdd.getNumPartitions() + 1))
            self._record_plan(conn, record, [Partition(n, "file", None, None) for n in numbers], None, observer)
            land_frame(self.frame, numbers, self.plan.columns, target, self.landing, record.run_id, checkpoint)
        else:
            planner = self.planner
            parts = planner.read_segments(self.plan, None)
            if not resumed:
                planned, rows = plan_partitions(
                    planner.source, planner.dialect, planner.table_ref(self.plan), parts, planner.sizing
                )
                self._record_plan(conn, record, planned, rows, observer)
            partitions, landed = load_plan(conn, record.run_id)
            if resumed:  # a new run's table was cleared when it began
                snapshot_log.clear_snapshots(conn, self.plan.names, keep=(record.run_id, sorted(landed)))
            pending = [p for p in partitions if p.number not in landed]
            record.partitions_planned = len(partitions)
            if pending:
                source = planner.partition_source(self.plan)
                land_partitions(
                    source, parts, pending, self.plan.columns, target, self.landing, record.run_id, checkpoint
                )
        final = progress(conn, record.run_id)
        record.partitions_landed, record.rows_landed = final.partitions_landed, final.rows_landed
        if self.file is None and self.plan.table.key_enforced:
            return  # key ranges of an enforced key hold each key once
        keyless = rows_without_key(conn, self.landing, self.plan.key_columns, record.run_id)
        if keyless:
            raise BatchRefused(
                f"{self.config.key}: the snapshot as of {self.as_of} has {keyless} row(s) with no value in the key "
                f"({', '.join(self.plan.table.primary_key)}); every row of a snapshot needs its key"
            )
        duplicate = duplicate_key_sample(conn, self.landing, self.plan.key_columns, record.run_id)
        if duplicate is not None:
            sample = key_sample(self.plan.table.primary_key, duplicate)
            raise BatchRefused(
                f"{self.config.key}: the snapshot as of {self.as_of} holds the key ({sample}) more than once; "
                "a snapshot must hold each key once"
            )

    def _record_plan(
        self,
        conn: psycopg.Connection,
        record: SnapshotRecord,
        partitions: list[Partition],
        rows: int | None,
        observer: Observer,
    ) -> None:
        record.partitions_planned, record.rows_planned = len(partitions), rows
        with conn.transaction():
            record_plan(conn, record.run_id, partitions)
        observer("planned", {"table": self.config.key, "run": record})
