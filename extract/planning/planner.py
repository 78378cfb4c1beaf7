"""The plan of each table of a pass, checked before any state is written: the seeds, the catalog read,
the type map, the target's names."""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager

import psycopg

from extract.catalog_state.read import CatalogOutcome, CatalogRead, CatalogReader
from extract.config.naming import TargetNames, check_column_names, check_distinct_replicas, target_names
from extract.config.patterns import expand_patterns, is_pattern, unmatched_patterns
from extract.config.seeds import SyncTable, read_host_aliases, read_sync_tables
from extract.config.settings import Settings
from extract.core.errors import TidemarkError
from extract.lifecycle.context import RunContext
from extract.planning.reader_choice import choose_reader
from extract.planning.table_plan import TablePlan
from extract.planning.unique_at_source import check_unique_at_source
from extract.runtime.spark import SparkRuntime
from extract.source.catalog import SourceTable
from extract.source.describe import configured_table, describe_table
from extract.source.recorded_tables import RecordedTables, recorded_tables
from extract.source.target_types import TargetTypes
from extract.source.typemap import TypeMap


class Planner:
    def __init__(self, context: RunContext) -> None:
        self.context = context
        settings = self.settings = context.settings
        self.aliases = read_host_aliases(settings.seeds_dir)
        configured = read_sync_tables(settings.seeds_dir)
        check_distinct_replicas(settings.source, self.aliases, [c for c in configured if not is_pattern(c)])
        self.target_types = TargetTypes(settings.target)
        try:
            self.type_map = TypeMap(settings.seeds_dir, self.target_types.problem)
        except BaseException:
            self.target_types.close()
            raise
        #: The pass's catalog read, when it made one: tables are then planned from it.
        self.catalog: CatalogRead | None = None
        self._catalog_outcome: CatalogOutcome | None = None
        self._catalog_conn: psycopg.Connection | None = None
        #: Enabled pattern rows of the seed that match no table of the source.
        self.unmatched_patterns: list[str] = []
        self._configured = configured
        self._tables: list[SyncTable] | None = None
        self._recorded: RecordedTables | None = None
        self._recorded_lock = threading.Lock()

    @property
    def tables(self) -> list[SyncTable]:
        """The seed's rows, with its patterns' tables as the source lists them now. Listed at first use, not
        when the seeds are read: bad seeds are refused before the source (and the JVM that reads it) is
        reached, and a pass starts the JVM beside its other checks."""
        if self._tables is None:
            configured = self._configured
            expanded = configured
            if any(is_pattern(c) for c in configured):
                query = self.context.dialect.tables_query()
                listing = [(str(s), str(t)) for s, t in self.context.source.query(query)]
                self.unmatched_patterns = unmatched_patterns(configured, listing)
                expanded = expand_patterns(configured, listing)
            check_distinct_replicas(self.settings.source, self.aliases, expanded)
            self._tables = expanded
        return self._tables

    def read_catalog(self, full: bool) -> CatalogRead:
        """Read the definitions of the configured tables that changed since the last catalog read (all
        of them when `full`); tables are planned from it afterwards. Nothing is written until
        `record_catalog`: a pass that stops at planning leaves the state as it was."""
        settings = self.settings
        reader = CatalogReader(
            self.context.source, self.context.dialect, settings.catalog_prepone, settings.state_schema
        )
        self._close_catalog()
        self._catalog_conn = psycopg.connect(self.settings.target.libpq_url)
        try:
            self.catalog, self._catalog_outcome = reader.read(self._catalog_conn, self.tables, full)
        except BaseException:
            self._close_catalog()
            raise
        finally:
            self.context.sources.release()
        return self.catalog

    def record_catalog(self) -> CatalogRead | None:
        """Write the catalog read's state, diff and marker (one transaction), and let its lock go."""
        read, outcome, conn = self.catalog, self._catalog_outcome, self._catalog_conn
        if read is not None and outcome is not None and conn is not None:
            outcome.record(conn, self.settings.state_schema, read)
        self._close_catalog()
        return read

    def _close_catalog(self) -> None:
        if self._catalog_conn is not None:
            self._catalog_conn.close()  # rolls back what was not recorded
        self._catalog_conn, self._catalog_outcome = None, None

    def close(self) -> None:
        self._close_catalog()
        self.target_types.close()

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

    def names(self, config: SyncTable) -> TargetNames:
        """The names of a configured table's replica: its dbt model, its key in the state, its tables."""
        return target_names(self.settings.source, self.aliases, config.source_schema, config.source_table)

    def model_name(self, config: SyncTable) -> str:
        """The dbt model of a configured table's replica."""
        return self.names(config).model_name

    def enabled_tables(self) -> list[SyncTable]:
        return [t for t in self.tables if t.enabled]

    def selected(self, names: list[str] | None) -> list[SyncTable]:
        """The tables a sync or reconcile runs: those named (each must be enabled), else every enabled one.
        A pattern row that matches no table is refused when nothing else is enabled, and said otherwise.
        Then the source is connected to: a bad source URL fails before any table starts, and a table
        named wrongly before the source (or the JVM that reads it) is waited for."""
        tables = self._selected(names)
        self.context.sources.connect_now()
        return tables

    def _selected(self, names: list[str] | None) -> list[SyncTable]:
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
            describe_table(self.context.source, self.context.dialect, config)
            if declared is None
            else configured_table(
                config, SourceTable(config.source_schema, config.source_table, declared.columns, declared.primary_key)
            )
        )
        columns = self.type_map.map_table(self.context.dialect.name, table)
        check_column_names(config.key, [c.target_name for c in columns])
        reader = choose_reader(config, table, self.recorded(), self.settings.cursor_candidates, self.context.dialect)
        return TablePlan(
            config=config,
            table=table,
            columns=columns,
            cursor=reader.cursor,
            names=target_names(self.settings.source, self.aliases, table.schema, table.name),
            state=self.settings.state_schema,
            changes=reader.changes,
        )

    def recorded(self) -> RecordedTables:
        """The tables whose changes the source records itself (Change Tracking, CDC), read once a pass."""
        with self._recorded_lock:
            if self._recorded is None:
                self._recorded = recorded_tables(self.context.source, self.context.dialect)
            return self._recorded

    def check_unique_values(self, plan: TablePlan) -> None:
        """The seed's record_id and unique_keys the replica does not carry yet hold at the source."""
        context = self.context
        check_unique_at_source(
            context.source, context.dialect, self.settings.target, plan, context.table_ref(plan.table)
        )


@contextmanager
def open_planner(settings: Settings, runtime: SparkRuntime) -> Iterator[Planner]:
    """A planner on a context of its own, both closed on leaving."""
    context = RunContext.open(settings, runtime)
    try:
        planner = Planner(context)
        try:
            yield planner
        finally:
            planner.close()
    finally:
        context.close()
