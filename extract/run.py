"""One extract run of one table: validate, read the clock, read the batch, land it, log it."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import psycopg
from pyspark.sql import SparkSession

from extract.catalog import SourceColumn, SourceTable
from extract.dialects import Dialect, dialect_for
from extract.errors import BatchRefused, TidemarkError, first_line
from extract.first_sync import drop_first_sync_table, prepare_landing, promote
from extract.jdbc import JdbcConnection
from extract.landing import (
    clear_staging,
    duplicate_key_sample,
    ensure_snapshot_table,
    ensure_tables,
    keep_latest_versions,
    relax_not_null,
)
from extract.naming import TargetNames, check_column_names, check_distinct_replicas, target_names
from extract.partition_log import Progress, load_plan, progress, record_plan
from extract.partitions import PartitionSizing, Segment, plan_partitions, segments, source_filter
from extract.seeds import SyncTable, read_host_aliases, read_sync_tables
from extract.settings import Settings
from extract.source import choose_cursor, describe_table, parse_watermark, read_clock
from extract.spark import SparkRuntime
from extract.state import (
    RunRecord,
    append_event,
    committed_watermark,
    ensure_state_schema,
    interrupted_run,
    merge_lock_sql,
    next_run_id,
    try_extract_lock,
)
from extract.target_types import TargetTypes
from extract.transfer import PartitionSource, land_in_driver, land_partitions
from extract.typemap import MappedColumn, TypeMap

#: Called with an event name and details: "start" or "resume", "watermark", "planned", "partition"
#: (from a watcher thread, as partitions land), "landed", "failed".
Observer = Callable[[str, dict[str, Any]], None]


def _silent(event: str, details: dict[str, Any]) -> None:
    return None


@dataclass(frozen=True)
class TablePlan:
    config: SyncTable
    table: SourceTable
    columns: list[MappedColumn]
    cursor: SourceColumn | None
    names: TargetNames

    @property
    def key_columns(self) -> list[str]:
        return [name.lower() for name in self.table.primary_key]


@dataclass(frozen=True)
class RunResult:
    table: str
    target: str
    run_id: int
    migration_type: str
    rows_landed: int
    watermark_used: str | None
    watermark_candidate: str


class Extractor:
    """Holds what every run in one process shares: settings, Spark, the source connection, seeds."""

    def __init__(self, settings: Settings, runtime: SparkRuntime) -> None:
        self.settings = settings
        self.runtime = runtime
        self.dialect: Dialect = dialect_for(settings.source.dialect)
        self.aliases = read_host_aliases(settings.seeds_dir)
        self.tables = read_sync_tables(settings.seeds_dir)
        check_distinct_replicas(settings.source, self.aliases, self.tables)
        self.target_types = TargetTypes(settings.target)
        try:
            self.type_map = TypeMap(settings.seeds_dir, self.target_types.problem)
        except BaseException:
            self.target_types.close()
            raise
        self.sizing = PartitionSizing(
            settings.partition_threshold, settings.max_partitions, settings.min_partition_rows, settings.partition_rows
        )
        self._local = threading.local()
        self._connections: list[JdbcConnection] = []
        self._lock = threading.Lock()
        _ = self.source  # connect now: a bad source URL fails before any table starts

    @property
    def spark(self) -> SparkSession:
        """The Spark session, started on first use."""
        return self.runtime.session

    @property
    def source(self) -> JdbcConnection:
        """This thread's connection to the source: tables synced at once each use their own."""
        connection: JdbcConnection | None = getattr(self._local, "connection", None)
        if connection is None:
            connection = JdbcConnection(self.runtime.jvm, self.settings.source)
            self._local.connection = connection
            with self._lock:
                self._connections.append(connection)
        return connection

    def close(self) -> None:
        self.target_types.close()
        with self._lock:
            for connection in self._connections:
                connection.close()
            self._connections.clear()

    def find(self, name: str) -> SyncTable:
        """The configured table called `name` (SCHEMA.TABLE): the one spelled exactly so, else the one that
        matches in another case, as SQL Server compares names. Refused when several match: names holding
        a dot can (schema `a.b` with table `c`, and schema `a` with table `b.c`)."""
        schema, dot, table = name.partition(".")
        if not dot or not schema or not table:
            raise TidemarkError(f"table {name!r} is not of the form SCHEMA.TABLE")
        for matches in (
            [c for c in self.tables if c.key == name],
            [c for c in self.tables if c.key.lower() == name.lower()],
        ):
            if len(matches) > 1:
                which = " and ".join(f"schema {c.source_schema!r} table {c.source_table!r}" for c in matches)
                raise TidemarkError(f"table {name!r} is ambiguous: it names {which}; rename one in the source")
            if matches:
                return matches[0]
        known = ", ".join(t.key for t in self.tables) or "none"
        raise TidemarkError(f"unknown table {name!r}: not in seeds/sync_tables.csv (configured: {known})")

    def enabled_tables(self) -> list[SyncTable]:
        return [t for t in self.tables if t.enabled]

    def plan(self, config: SyncTable) -> TablePlan:
        """Everything about a table that can be wrong with the input, checked before any state is written."""
        table = describe_table(self.source, self.dialect, config)
        columns = self.type_map.map_table(self.dialect.name, table)
        check_column_names(config.key, [c.target_name for c in columns])
        return TablePlan(
            config=config,
            table=table,
            columns=columns,
            cursor=choose_cursor(table, config, self.settings.cursor_candidates, self.dialect),
            names=target_names(self.settings.source, self.aliases, table.schema, table.name),
        )

    def partition_source(self, plan: TablePlan) -> PartitionSource:
        select_list = ", ".join(self.dialect.select_expression(c.source, c.transfer) for c in plan.columns)
        return PartitionSource(self.runtime, self.dialect, self.settings.source, self.table_ref(plan), select_list)

    def table_ref(self, plan: TablePlan) -> str:
        hint = self.dialect.table_hint(self.settings.read_uncommitted)
        return self.dialect.table_ref(plan.table.schema, plan.table.name) + hint

    def _bound(self, plan: TablePlan, watermark_used: str | None) -> datetime | None:
        """Where the changed-rows filter starts: the committed watermark less the safety window."""
        if plan.cursor is None or not watermark_used:
            return None
        start_from = parse_watermark(watermark_used) - self.settings.safety_window
        return self.dialect.cursor_lower_bound(start_from, plan.cursor)

    def read_segments(self, plan: TablePlan, watermark_used: str | None) -> list[Segment]:
        return segments(self.dialect, plan.table, plan.cursor, self._bound(plan, watermark_used))

    def _begin(self, conn: psycopg.Connection, plan: TablePlan) -> tuple[RunRecord, bool]:
        """A new run, or the killed run of this table to go on with (same watermark, same partitions)."""
        names = plan.names
        watermark_used = committed_watermark(conn, names.table_key) if plan.cursor else None
        killed = interrupted_run(conn, names.table_key)
        if killed is not None and killed.watermark_used == watermark_used:
            return killed, True
        clear_staging(conn, names)
        record = RunRecord(
            run_id=next_run_id(conn),
            table_key=names.table_key,
            source_schema=plan.table.schema,
            source_table=plan.table.name,
            target_schema=names.schema,
            target_table=names.table,
            migration_type="incremental" if watermark_used else "full",
            cursor_column=plan.cursor.name if plan.cursor else None,
            watermark_used=watermark_used,
            started_at=datetime.now(UTC),
            source_filter=source_filter(self.read_segments(plan, watermark_used)),
            rows_landed=0,
            partitions_landed=0,
        )
        conn.commit()
        append_event(conn, record)
        return record, False

    def _plan_partitions(
        self, conn: psycopg.Connection, plan: TablePlan, record: RunRecord, observer: Observer
    ) -> None:
        """Read the clock, then cut the batch into partitions; both are recorded before any row is read."""
        # The clock is read before the data query: a row committed later is read next time.
        record.watermark_candidate = read_clock(self.source, self.dialect)
        observer("watermark", {"table": plan.config.key, "run": record})
        parts = self.read_segments(plan, record.watermark_used)
        session_started = False

        def counted(rows: int) -> None:
            nonlocal session_started
            if not session_started and not self.fits_driver(rows):
                session_started = True
                self.runtime.start_session()  # meanwhile the source finds the cut points

        table_ref = self.table_ref(plan)
        partitions, rows = plan_partitions(self.source, self.dialect, table_ref, parts, self.sizing, counted)
        record.partitions_planned = len(partitions)
        record.rows_planned = rows
        record.landed_by = "driver" if self.fits_driver(rows) else "spark"
        with conn.transaction():
            record_plan(conn, record.run_id, partitions)
            append_event(conn, record)
        observer("planned", {"table": plan.config.key, "run": record})

    def fits_driver(self, rows: int) -> bool:
        """Whether a run of `rows` rows is small enough to land from the driver, without a Spark job: at most
        one partition's worth (PARTITION_THRESHOLD), unless partitions of a fixed size are asked for."""
        return self.sizing.fixed_rows is None and rows <= self.sizing.threshold

    def _read(
        self, conn: psycopg.Connection, plan: TablePlan, record: RunRecord, resumed: bool, observer: Observer
    ) -> bool:
        """Land every partition not landed yet, in parallel; then refuse a batch with a repeated key.
        Returns whether the run landed as a first sync (extract/first_sync.py)."""
        if not resumed:
            self._plan_partitions(conn, plan, record, observer)
        partitions, landed = load_plan(conn, record.run_id)
        clear_staging(conn, plan.names, keep=(record.run_id, sorted(landed)))
        first_sync = prepare_landing(
            conn,
            plan.names,
            plan.columns,
            full_run=record.migration_type == "full",
            resumed_partitions=bool(landed),
        )
        landing = (plan.names.schema, plan.names.first_sync_table if first_sync else plan.names.staging_table)
        pending = [p for p in partitions if p.number not in landed]

        def checkpoint(watch_conn: psycopg.Connection, current: Progress) -> None:
            record.partitions_landed = current.partitions_landed
            record.rows_landed = current.rows_landed
            record.last_pk_synced = current.last_position
            append_event(watch_conn, record)  # a checkpoint: the status stays 'running'
            observer("partition", {"table": plan.config.key, "run": record})

        if pending:
            lands = land_in_driver if record.landed_by == "driver" else land_partitions
            lands(
                self.partition_source(plan),
                self.read_segments(plan, record.watermark_used),
                pending,
                plan.columns,
                self.settings.target,
                landing,
                record.run_id,
                checkpoint,
                tagged=not first_sync,
            )
        final = progress(conn, record.run_id)
        record.partitions_landed, record.rows_landed = final.partitions_landed, final.rows_landed
        record.last_pk_synced = final.last_position
        cursor = plan.cursor
        if plan.table.key_enforced and (cursor is None or not record.watermark_used):
            return first_sync  # key ranges, read in key order, hold each key of an enforced key once
        # A first sync's table holds this run's rows only, and no run id.
        duplicate = duplicate_key_sample(conn, landing, plan.key_columns, None if first_sync else record.run_id)
        if duplicate is not None and plan.table.key_enforced and cursor is not None:
            # Changed rows are read in cursor order: a row that changed meanwhile can be read twice.
            target = next(c.target_name for c in plan.columns if c.source.name == cursor.name)
            keep_latest_versions(conn, plan.names, plan.key_columns, target, record.run_id)
        elif duplicate is not None:
            sample = ", ".join(f"{k}={v!r}" for k, v in zip(plan.table.primary_key, duplicate, strict=True))
            raise BatchRefused(
                f"{plan.config.key}: the batch holds the key ({sample}) more than once; the source does not "
                "enforce this key. Fix the source or set primary_key in seeds/sync_tables.csv"
            )
        return first_sync

    def run(self, config: SyncTable, observer: Observer = _silent, plan: TablePlan | None = None) -> RunResult:
        """Land the table's changed rows (`plan`: the table as planned already, else planned now)."""
        plan = self.plan(config) if plan is None else plan
        names = plan.names
        with psycopg.connect(self.settings.target.libpq_url, autocommit=False) as conn:
            ensure_state_schema(conn)
            if not try_extract_lock(conn, names.table_key):
                raise TidemarkError(f"another extract of {config.key} is running; try again when it ends")
            conn.commit()
            ensure_tables(conn, names, plan.columns, plan.table.primary_key)
            if config.asof_history:  # so that its history model builds before any snapshot lands
                ensure_snapshot_table(conn, names, plan.columns)
            relax_not_null(conn, names, plan.columns, plan.table.primary_key)
            record, resumed = self._begin(conn, plan)
            observer(
                "resume" if resumed else "start",
                {"table": config.key, "run": record, "safety_window": self.settings.safety_window},
            )
            try:
                first_sync = self._read(conn, plan, record, resumed, observer)
                record.status = "landed"
                record.ended_at = datetime.now(UTC)
                conn.commit()
                with conn.transaction():
                    # The merge's lock before staging's, in the order the merge takes them.
                    conn.execute(*merge_lock_sql(names.table_key))
                    if first_sync:
                        promote(conn, names, plan.columns, record.run_id)
                    append_event(conn, record)
            except Exception as exc:
                conn.rollback()
                record.status = "failed"
                record.error_message = first_line(exc)
                record.ended_at = datetime.now(UTC)
                append_event(conn, record)
                clear_staging(conn, names)
                drop_first_sync_table(conn, names)
                observer("failed", {"table": config.key, "run": record})
                raise
        observer("landed", {"table": config.key, "run": record})
        return RunResult(
            table=config.key,
            target=names.table_key,
            run_id=record.run_id,
            migration_type=record.migration_type,
            rows_landed=record.rows_landed or 0,
            watermark_used=record.watermark_used,
            watermark_candidate=record.watermark_candidate or "",
        )
