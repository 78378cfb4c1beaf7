"""What every run in one process shares: settings, Spark, the source connections, the seeds; and the plan
of each table, checked before any state is written."""

from __future__ import annotations

import sys
import threading
from datetime import datetime

import psycopg
from pyspark.sql import SparkSession

from extract.catalog_state.read import CatalogOutcome, CatalogRead, CatalogReader
from extract.config.naming import check_column_names, check_distinct_replicas, target_names
from extract.config.patterns import expand_patterns, is_pattern, unmatched_patterns
from extract.config.seeds import SyncTable, read_host_aliases, read_sync_tables
from extract.config.settings import Settings
from extract.core.errors import TidemarkError
from extract.landing.transfer import PartitionSource
from extract.partitions.plan import PartitionSizing, Segment, segments
from extract.planning.table_plan import TablePlan
from extract.planning.unique_at_source import check_unique_at_source
from extract.runtime.spark import SparkRuntime
from extract.source.catalog import SourceTable
from extract.source.describe import choose_cursor, configured_table, describe_table
from extract.source.dialects import Dialect, dialect_for
from extract.source.jdbc import JdbcConnection
from extract.source.target_types import TargetTypes
from extract.source.typemap import TypeMap
from extract.source.watermarks import parse_modify_id, parse_watermark


class Planner:
    def __init__(self, settings: Settings, runtime: SparkRuntime) -> None:
        self.settings = settings
        self.runtime = runtime
        self.dialect: Dialect = dialect_for(settings.source.dialect)
        self.aliases = read_host_aliases(settings.seeds_dir)
        configured = read_sync_tables(settings.seeds_dir)
        check_distinct_replicas(settings.source, self.aliases, [c for c in configured if not is_pattern(c)])
        self.target_types = TargetTypes(settings.target)
        try:
            self.type_map = TypeMap(settings.seeds_dir, self.target_types.problem)
        except BaseException:
            self.target_types.close()
            raise
        self.sizing = PartitionSizing(
            settings.partition_threshold, settings.max_partitions, settings.min_partition_rows, settings.partition_rows
        )
        #: The pass's catalog read, when it made one: tables are then planned from it.
        self.catalog: CatalogRead | None = None
        self._catalog_outcome: CatalogOutcome | None = None
        self._catalog_conn: psycopg.Connection | None = None
        self._local = threading.local()
        self._connections: list[JdbcConnection] = []
        self._lock = threading.Lock()
        # Connect now, so that a bad source URL fails before any table starts; the first thread that
        # reads the source takes this connection over.
        self._idle = [self._connect()]
        #: Enabled pattern rows of the seed that match no table of the source.
        self.unmatched_patterns: list[str] = []
        try:
            self.tables = self._expanded(configured)
            check_distinct_replicas(settings.source, self.aliases, self.tables)
        except BaseException:
            self.close()
            raise

    def _expanded(self, configured: list[SyncTable]) -> list[SyncTable]:
        """The seed's rows, with its patterns' tables as the source lists them now."""
        if not any(is_pattern(c) for c in configured):
            return configured
        listing = [(str(s), str(t)) for s, t in self._idle[0].query(self.dialect.tables_query())]
        self.unmatched_patterns = unmatched_patterns(configured, listing)
        return expand_patterns(configured, listing)

    @property
    def spark(self) -> SparkSession:
        """The Spark session, started on first use."""
        return self.runtime.session

    @property
    def source(self) -> JdbcConnection:
        """This thread's connection to the source: tables synced at once each use their own."""
        connection: JdbcConnection | None = getattr(self._local, "connection", None)
        if connection is None:
            with self._lock:
                connection = self._idle.pop() if self._idle else None
            self._local.connection = connection = connection or self._connect()
        return connection

    def _connect(self) -> JdbcConnection:
        connection = JdbcConnection(self.runtime.jvm, self.settings.source)
        with self._lock:
            self._connections.append(connection)
        return connection

    def _release_source(self) -> None:
        """Hand this thread's connection to the next thread that reads the source."""
        connection: JdbcConnection | None = getattr(self._local, "connection", None)
        if connection is not None:
            self._local.connection = None
            with self._lock:
                self._idle.append(connection)

    def read_catalog(self, full: bool) -> CatalogRead:
        """Read the definitions of the configured tables that changed since the last catalog read (all
        of them when `full`); tables are planned from it afterwards. Nothing is written until
        `record_catalog`: a pass that stops at planning leaves the state as it was."""
        reader = CatalogReader(self.source, self.dialect, self.settings.catalog_prepone)
        self._close_catalog()
        self._catalog_conn = psycopg.connect(self.settings.target.libpq_url)
        try:
            self.catalog, self._catalog_outcome = reader.read(self._catalog_conn, self.tables, full)
        except BaseException:
            self._close_catalog()
            raise
        finally:
            self._release_source()
        return self.catalog

    def record_catalog(self) -> CatalogRead | None:
        """Write the catalog read's state, diff and marker (one transaction), and let its lock go."""
        read, outcome, conn = self.catalog, self._catalog_outcome, self._catalog_conn
        if read is not None and outcome is not None and conn is not None:
            outcome.record(conn, read)
        self._close_catalog()
        return read

    def _close_catalog(self) -> None:
        if self._catalog_conn is not None:
            self._catalog_conn.close()  # rolls back what was not recorded
        self._catalog_conn, self._catalog_outcome = None, None

    def close(self) -> None:
        self._close_catalog()
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

    def model_name(self, config: SyncTable) -> str:
        """The dbt model of a configured table's replica."""
        return target_names(self.settings.source, self.aliases, config.source_schema, config.source_table).model_name

    def enabled_tables(self) -> list[SyncTable]:
        return [t for t in self.tables if t.enabled]

    def selected(self, names: list[str] | None) -> list[SyncTable]:
        """The tables a sync or reconcile runs: those named (each must be enabled), else every enabled one.
        A pattern row that matches no table is refused when nothing else is enabled, and said otherwise."""
        if names is not None:
            tables = [self.find(name) for name in names]
            disabled = [t.key for t in tables if not t.enabled]
            if disabled:
                raise TidemarkError(
                    f"table {disabled[0]!r} is disabled in seeds/sync_tables.csv (enabled is false): "
                    "enable it to sync it"
                )
            return tables
        tables = self.enabled_tables()
        unmatched = ", ".join(repr(p) for p in self.unmatched_patterns)
        if not tables:
            raise TidemarkError(
                f"seeds/sync_tables.csv enables no table: the pattern {unmatched} matches no table in the source"
                if unmatched
                else "seeds/sync_tables.csv enables no table: every row has enabled set to false"
            )
        if unmatched:
            print(
                f"warning: the pattern {unmatched} in seeds/sync_tables.csv matches no table in the source",
                file=sys.stderr,
            )
        return tables

    def plan(self, config: SyncTable) -> TablePlan:
        """Everything about a table that can be wrong with the input, checked before any state is written."""
        declared = None if self.catalog is None else self.catalog.tables.get(config.key)
        table = (
            describe_table(self.source, self.dialect, config)
            if declared is None
            else configured_table(
                config, SourceTable(config.source_schema, config.source_table, declared.columns, declared.primary_key)
            )
        )
        columns = self.type_map.map_table(self.dialect.name, table)
        check_column_names(config.key, [c.target_name for c in columns])
        return TablePlan(
            config=config,
            table=table,
            columns=columns,
            cursor=choose_cursor(table, config, self.settings.cursor_candidates, self.dialect),
            names=target_names(self.settings.source, self.aliases, table.schema, table.name),
        )

    def check_unique_values(self, plan: TablePlan) -> None:
        """The seed's record_id and unique_keys the replica does not carry yet hold at the source."""
        check_unique_at_source(self.source, self.dialect, self.settings.target, plan, self.table_ref(plan))

    def partition_source(self, plan: TablePlan) -> PartitionSource:
        select_list = ", ".join(
            self.dialect.select_expression(c.source, c.transfer, c.target_type) for c in plan.columns
        )
        return PartitionSource(self.runtime, self.dialect, self.settings.source, self.table_ref(plan), select_list)

    def table_ref(self, plan: TablePlan) -> str:
        hint = self.dialect.table_hint(self.settings.read_uncommitted)
        return self.dialect.table_ref(plan.table.schema, plan.table.name) + hint

    def changed_rows_bound(self, plan: TablePlan, watermark_used: str | None) -> datetime | int | None:
        """Where the changed-rows filter starts: the committed watermark less the safety window; a
        modify id's exactly (no transaction in flight can commit below it)."""
        if plan.cursor is None or not watermark_used:
            return None
        if self.dialect.is_modify_id(plan.cursor):
            return parse_modify_id(watermark_used)
        start_from = parse_watermark(watermark_used) - self.settings.safety_window
        return self.dialect.cursor_lower_bound(start_from, plan.cursor)

    def read_segments(self, plan: TablePlan, watermark_used: str | None) -> list[Segment]:
        return segments(self.dialect, plan.table, plan.cursor, self.changed_rows_bound(plan, watermark_used))

    def fits_driver(self, rows: int) -> bool:
        """Whether a run of `rows` rows is small enough to land from the driver, without a Spark job: at most
        one partition's worth (PARTITION_THRESHOLD), unless partitions of a fixed size are asked for."""
        return self.sizing.fixed_rows is None and rows <= self.sizing.threshold
