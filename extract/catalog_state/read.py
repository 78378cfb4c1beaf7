"""One catalog read: which configured tables changed definition since the marker (less the prepone
window), their columns read afresh, the others carried from the state, and the diff recorded."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta

import psycopg

from extract.catalog_state.definitions import CatalogChange, changes, from_json, to_json
from extract.catalog_state.scope import CREATED, UPDATED, Listed, TableName, ancestral_merge, label, match_scope
from extract.catalog_state.store import StateRow, catalog_lock_sql, load_state, next_read_id, write_state
from extract.config.seeds import SyncTable
from extract.core.state_schema import StateSchema
from extract.source.catalog import SourceTable
from extract.source.describe import declared_table
from extract.source.dialects import Dialect
from extract.source.jdbc import JdbcConnection
from extract.source.watermarks import parse_watermark
from extract.state.run_log import ensure_state_schema

#: Earlier than any definition: a full read asks for the tables changed since.
_EVER = datetime(1900, 1, 1)


@dataclass
class CatalogRead:
    full: bool
    #: Declared definitions of the configured tables the source holds, by the seed's key.
    tables: dict[str, SourceTable]
    #: Tables whose columns this read asked the source for.
    described: list[TableName] = field(default_factory=list)
    changes: list[CatalogChange] = field(default_factory=list)
    #: Its number in the state, once recorded.
    read_id: int | None = None
    #: The first read: the state held no table before it.
    first: bool = False


@dataclass(frozen=True)
class CatalogOutcome:
    """What a read writes to the state when the pass goes ahead."""

    previous: dict[TableName, StateRow]
    state: dict[TableName, StateRow]
    marker: str

    def record(self, target: psycopg.Connection, schema: StateSchema, read: CatalogRead) -> None:
        """State, diff and marker, in the transaction the read began (and holds the catalog lock in)."""
        ensure_state_schema(target, schema)
        read.read_id = next_read_id(target, schema)
        write_state(target, schema, read.read_id, self.previous, self.state, read.changes, self.marker)
        target.commit()


def _since_text(moment: datetime) -> str:
    """Milliseconds, floored: both dialects parse it, and a lower bound only reads more."""
    return f"{moment:%Y-%m-%d %H:%M:%S.%f}"[:23]


class CatalogReader:
    def __init__(self, source: JdbcConnection, dialect: Dialect, prepone: timedelta, schema: StateSchema) -> None:
        self.source = source
        self.dialect = dialect
        self.prepone = prepone
        self.schema = schema

    def read(
        self, target: psycopg.Connection, configs: Sequence[SyncTable], full: bool
    ) -> tuple[CatalogRead, CatalogOutcome]:
        """Read, and leave the transaction open on `target` with the catalog lock held: nothing is written
        until the pass has planned every table (`CatalogOutcome.record`)."""
        target.execute(*catalog_lock_sql(self.schema))
        previous, marker = load_state(target, self.schema)
        clock = str(self.source.query(self.dialect.catalog_clock_query())[0][0])
        listing = self._listing()
        tracked = all(t.modify_date is not None for t in listing)
        full = full or marker is None or not previous or not tracked
        since = None if full or marker is None else parse_watermark(marker) - self.prepone
        matched = match_scope(configs, listing)
        labels = {(t.schema, t.name): label(t, (t.schema, t.name) in previous, since) for t in matched.values()}
        fresh = self._describe(matched.values(), labels, since)
        # A table dropped between the listing and its description is not there any more.
        matched = {key: t for key, t in matched.items() if (t.schema, t.name) in fresh or _kept(labels, t)}
        labels = {(t.schema, t.name): labels[(t.schema, t.name)] for t in matched.values()}
        definitions = ancestral_merge({k: to_json(t) for k, t in fresh.items()}, _definitions(previous), labels)
        state = _state_rows(previous, definitions, labels, {(t.schema, t.name): t for t in matched.values()})
        tables = {key: from_json(t.schema, t.name, definitions[(t.schema, t.name)]) for key, t in matched.items()}
        read = CatalogRead(full, tables, sorted(fresh), _diff(previous, state, fresh), first=not previous)
        return read, CatalogOutcome(previous, state, clock)

    def _listing(self) -> list[Listed]:
        """Every table and view; without modify dates when the source keeps none."""
        probe = self.dialect.tracks_modify_dates_query()
        if probe is not None and self.source.query(probe)[0][0] != "1":
            return [Listed(str(s), str(n), None) for s, n in self.source.query(self.dialect.tables_query())]
        rows = self.source.query(self.dialect.tables_with_modify_dates_query())
        return [Listed(str(s), str(n), parse_watermark(str(d))) for s, n, d in rows]

    def _describe(
        self, matched: Iterable[Listed], labels: Mapping[TableName, str], since: datetime | None
    ) -> dict[TableName, SourceTable]:
        """Columns of the CREATED and UPDATED tables: those stamped since the bound in one query, a
        table new to the state but older than that one query each."""
        wanted = [t for t in matched if labels[(t.schema, t.name)] in (CREATED, UPDATED)]
        bound = _EVER if since is None else since
        recent = {(t.schema, t.name) for t in wanted if t.modify_date is not None and t.modify_date >= bound}
        rows_by_table: dict[TableName, list[Sequence[str | None]]] = {}
        if recent:
            for row in self.source.query(self.dialect.columns_changed_since_query(), (_since_text(bound),)):
                table = (str(row[0]), str(row[1]))
                if table in recent:
                    rows_by_table.setdefault(table, []).append(row[2:])
        for t in wanted:
            table = (t.schema, t.name)
            if table not in recent:
                rows_by_table[table] = list(self.source.query(self.dialect.catalog_query(), table))
        return {table: declared_table(self.dialect, *table, rows) for table, rows in rows_by_table.items() if rows}


def _kept(labels: Mapping[TableName, str], listed: Listed) -> bool:
    return labels[(listed.schema, listed.name)] not in (CREATED, UPDATED)


def _definitions(previous: Mapping[TableName, StateRow]) -> dict[TableName, dict[str, object]]:
    return {table: row.definition for table, row in previous.items()}


def _state_rows(
    previous: Mapping[TableName, StateRow],
    definitions: Mapping[TableName, dict[str, object]],
    labels: Mapping[TableName, str],
    listed: Mapping[TableName, Listed],
) -> dict[TableName, StateRow]:
    """The new rows: a version counted up when the definition changed."""
    state = {}
    for table, definition in definitions.items():
        old = previous.get(table)
        version = 1 if old is None else old.version + (old.definition != definition)
        stamp = listed[table].modify_date
        state[table] = StateRow(definition, version, labels[table], None if stamp is None else str(stamp))
    return state


def _diff(
    previous: Mapping[TableName, StateRow], state: Mapping[TableName, StateRow], fresh: Mapping[TableName, SourceTable]
) -> list[CatalogChange]:
    found: list[CatalogChange] = []
    for table in sorted(previous.keys() - state.keys()):
        found += changes(from_json(*table, previous[table].definition), None)
    for table in sorted(fresh):
        old = previous.get(table)
        found += changes(None if old is None else from_json(*table, old.definition), fresh[table])
    return found
