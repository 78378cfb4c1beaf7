"""The sync's reader: the rows changed since the committed watermark, by the source's clock or by its modify
id (rowversion), or every row (full refresh: no cursor, no committed state yet, a backfill, --full-refresh).

Its input state is the registry's cursor value; its output state is the clock reading (or the lowest
modify id in flight) read before the data query, with the greatest cursor value landed beside it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import psycopg
from psycopg import sql

from extract.core.errors import KEY_PLACE, KeyValueRefused
from extract.core.observer import ClockRead, Note, Observer
from extract.core.sql_contract import RUN_ID_COLUMN
from extract.evolution.apply import backfill_due
from extract.evolution.follow import prepare_tables
from extract.evolution.full_refresh import replace_replica
from extract.landing.clear_landed import clear_staging
from extract.landing.first_sync import drop_first_sync_table, prepare_landing, promote
from extract.landing.progress_watch import ProgressCallback
from extract.landing.staging import (
    analyze_landed,
    duplicate_key_sample,
    keep_latest_versions,
    key_sample,
)
from extract.landing.transfer import land_in_driver, land_partitions
from extract.lifecycle.active_run import ActiveRun
from extract.partitions.plan import Partition, Segment, plan_partitions, source_filter
from extract.readers.read_start import read_segments, reader_kind
from extract.readers.table_reader import RunLogReader
from extract.source.watermarks import (
    check_monotonic,
    read_watermark,
    usable_watermark,
)
from extract.state.contract import StreamState
from extract.state.registry import committed_state
from extract.state.run_log import RunRecord


@dataclass
class ChangedRowsReader(RunLogReader):
    observer: Observer
    #: Read every row and replace the replica with them (extract/evolution/full_refresh.py).
    refresh: bool = False
    #: What this run changed in the replica to follow the source's schema (extract/evolution).
    schema_changes: list[str] = field(default_factory=list)
    first_sync: bool = False
    _decided: tuple[str | None] | None = None

    def prepare(self, conn: psycopg.Connection) -> None:
        self.schema_changes = prepare_tables(conn, self.plan, self.refresh, self.observer)

    def input_state(self, conn: psycopg.Connection) -> StreamState | None:
        return committed_state(conn, self.state, self.table_key)

    def _watermark_used(self, conn: psycopg.Connection, state: StreamState | None) -> str | None:
        """Where this run reads from: the committed cursor value, unless every row is to be read."""
        if self._decided is not None:
            return self._decided[0]
        backfill = backfill_due(conn, self.state, self.table_key)
        if backfill is not None:
            self.observer(Note(self.table, f"every row read to fill {backfill}"))
        self._decided = (None if self.refresh or backfill else self._committed_position(state),)
        return self._decided[0]

    def _committed_position(self, state: StreamState | None) -> str | None:
        """Where the input state says to read from, if this reader can (else every row is read)."""
        committed = None if state is None else state.cursor_value
        return usable_watermark(self.context.dialect, self.plan.cursor, committed)

    def resume(self, conn: psycopg.Connection, killed: RunRecord, input_state: StreamState | None) -> RunRecord | None:
        # The same input and the same landing, so the same partitions: only then do the landed ones still
        # count. A run that replaces the replica lands apart from one that merges into it.
        if killed.migration_type == "reconcile" or killed.partitions_planned is None:
            return None
        if bool(killed.replaces_replica) != self.refresh:
            return None
        if killed.watermark_used != self._watermark_used(conn, input_state):
            return None
        killed.error_message = None  # a retry's note belongs to the attempt that was killed
        return killed

    def _segments(self, watermark_used: str | None) -> list[Segment]:
        """What a run from `watermark_used` reads, as segments of `_relation`'s rows in their order."""
        return read_segments(self.context, self.plan, watermark_used)

    def _relation(self, record: RunRecord) -> str:
        """What the segments' rows are read from (once the run's position is read)."""
        return self.context.table_ref(self.plan.table)

    def _read_position(self, record: RunRecord) -> None:
        """The output state's position, read before the data query: a row committed later is read next time."""
        context, plan = self.context, self.plan
        record.watermark_candidate = read_watermark(context.source, context.dialect, plan.cursor)
        check_monotonic(plan.config.key, record.watermark_used, record.watermark_candidate)

    def new_run(self, conn: psycopg.Connection, run_id: int, input_state: StreamState | None) -> RunRecord:
        watermark_used = self._watermark_used(conn, input_state)
        parts = self._segments(watermark_used)
        migration_type = "incremental" if watermark_used else "full"
        record = self.run_record(run_id, migration_type, watermark_used, source_filter(parts))
        record.replaces_replica = self.refresh
        return record

    def clear(self, conn: psycopg.Connection, keep: tuple[int, list[int]]) -> None:
        clear_staging(conn, self.state, self.plan.names, keep)

    def _plan_partitions(self, run: ActiveRun[RunRecord], parts: list[Segment]) -> None:
        """Read the clock, then cut the batch into partitions; both are recorded before any row is read."""
        context, record = self.context, run.record
        self._read_position(record)
        self.observer(ClockRead(self.table, record))
        session_started = False

        def counted(rows: int) -> None:
            nonlocal session_started
            if not session_started and not context.fits_driver(rows):
                session_started = True
                context.runtime.start_session()  # meanwhile the source finds the cut points

        relation = self._relation(record)
        partitions, rows = plan_partitions(context.source, context.dialect, relation, parts, context.sizing, counted)
        record.landed_by = "driver" if context.fits_driver(rows) else "spark"
        run.plan(partitions, rows)

    def read(self, run: ActiveRun[RunRecord]) -> None:
        plan, record = self.plan, run.record
        parts = self._segments(record.watermark_used)
        if not run.resumed:
            self._plan_partitions(run, parts)
        partitions, landed = run.load_plan()
        self.first_sync = first_sync = prepare_landing(
            run.conn,
            plan.names,
            plan.columns,
            full_run=record.migration_type == "full",
            resumed_partitions=bool(landed),
            replace=self.refresh,
        )
        landing = (plan.names.schema, plan.names.first_sync_table if first_sync else plan.names.staging_table)
        lands = land_in_driver if record.landed_by == "driver" else land_partitions
        source = self.context.partition_source(plan.table, plan.columns, self._relation(record))
        target = self.context.run_target(record.run_id)

        def land(pending: list[Partition], checkpoint: ProgressCallback, fetch_rows: int) -> None:
            lands(
                source.fetching(fetch_rows),
                parts,
                pending,
                plan.columns,
                target,
                landing,
                checkpoint,
                tagged=not first_sync,
            )

        run.land(partitions, landed, land)
        self._check_batch(run.conn, record, landing)
        if not first_sync:
            analyze_landed(run.conn, plan.names)

    def _check_batch(self, conn: psycopg.Connection, record: RunRecord, landing: tuple[str, str]) -> None:
        """Refuse a batch that holds a key twice, unless the source enforces the key and the row changed
        while it was read in cursor order: then its latest version is kept."""
        plan, cursor = self.plan, self.plan.cursor
        if plan.table.key_enforced and (cursor is None or not record.watermark_used):
            return  # key ranges, read in key order, hold each key of an enforced key once
        # A first sync's table holds this run's rows only, and no run id.
        run_id = None if self.first_sync else record.run_id
        duplicate = duplicate_key_sample(conn, landing, plan.key_columns, run_id)
        if duplicate is not None and plan.table.key_enforced and cursor is not None:
            target = next(c.target_name for c in plan.columns if c.source.name == cursor.name)
            keep_latest_versions(conn, plan.names, plan.key_columns, target, record.run_id)
        elif duplicate is not None:
            raise KeyValueRefused(
                f"{plan.config.key}: the batch holds {KEY_PLACE} more than once; the source does not "
                "enforce this key. Fix the source or set primary_key in seeds/sync_tables.csv",
                key_sample(plan.table.primary_key, duplicate),
            )

    def output_state(self, conn: psycopg.Connection, record: RunRecord) -> StreamState:
        plan = self.plan
        return StreamState(
            stream_id=self.table_key,
            cursor_field=record.cursor_column,
            cursor_value=record.watermark_candidate,
            records_emitted=record.rows_landed or 0,
            max_cursor_seen=self._max_cursor_seen(conn, record),
            reader=reader_kind(self.context, plan, record.watermark_used),
        )

    def _max_cursor_seen(self, conn: psycopg.Connection, record: RunRecord) -> str | None:
        plan = self.plan
        if plan.cursor is None:
            return None
        column = next(c.target_name for c in plan.columns if c.source.name == plan.cursor.name)
        table = plan.names.first_sync_table if self.first_sync else plan.names.staging_table
        query = sql.SQL("select cast(max({}) as text) from {}").format(
            sql.Identifier(column), sql.Identifier(plan.names.schema, table)
        )
        if not self.first_sync:
            query = sql.SQL("{} where {} = %s").format(query, sql.Identifier(RUN_ID_COLUMN))
        row = conn.execute(query, () if self.first_sync else (record.run_id,)).fetchone()
        return None if row is None or row[0] is None else str(row[0])

    def commit(self, conn: psycopg.Connection, record: RunRecord) -> None:
        if self.refresh:
            rows, replaced = replace_replica(conn, self.plan, record.run_id)
            self.schema_changes.append(f"replica replaced: {rows:,} rows landed, {replaced:,} before")
        elif self.first_sync:
            promote(conn, self.plan.names, self.plan.columns, record.run_id)

    def discard(self, conn: psycopg.Connection, record: RunRecord) -> None:
        clear_staging(conn, self.state, self.plan.names)
        drop_first_sync_table(conn, self.plan.names)
