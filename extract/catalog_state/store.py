"""The catalog state in the target's state schema: read it, and write a read's outcome (state,
diff and marker in one transaction, the marker last)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import psycopg
from psycopg.types.json import Jsonb

from extract.catalog_state.definitions import CatalogChange
from extract.catalog_state.scope import TableName
from extract.core.state_schema import StateSchema

#: Catalog reads of one project take turns: each writes a state derived from the one it read.
CATALOG_LOCK_KEY = "tidemark:catalog"


def catalog_lock_sql(state: StateSchema) -> tuple[str, tuple[str]]:
    return "select pg_advisory_xact_lock(hashtext(%s))", (state.lock_key(CATALOG_LOCK_KEY),)


@dataclass(frozen=True)
class StateRow:
    definition: dict[str, Any]
    version: int
    label: str
    modify_date: str | None


def load_state(conn: psycopg.Connection, schema: StateSchema) -> tuple[dict[TableName, StateRow], str | None]:
    """The state by table, and the marker (None before the first read, or before the state schema)."""
    marker_table = schema.relation("catalog_marker").as_string(conn)
    exists = conn.execute("select to_regclass(%s) is not null", (marker_table,)).fetchone()
    if not exists or not exists[0]:
        return {}, None
    rows = conn.execute(
        schema.sql("select source_schema, source_table, definition, version, label, modify_date from {catalog_state}")
    ).fetchall()
    state = {(source_schema, table): StateRow(*rest) for source_schema, table, *rest in rows}
    marker = conn.execute(schema.sql("select marker from {catalog_marker}")).fetchone()
    return state, None if marker is None else str(marker[0])


def next_read_id(conn: psycopg.Connection, schema: StateSchema) -> int:
    row = conn.execute("select nextval(%s)", (schema.relation("catalog_read_id_seq").as_string(conn),)).fetchone()
    assert row is not None
    return int(row[0])


def write_state(
    conn: psycopg.Connection,
    schema: StateSchema,
    read_id: int,
    previous: Mapping[TableName, StateRow],
    state: Mapping[TableName, StateRow],
    diff: Iterable[CatalogChange],
    marker: str,
) -> None:
    """Rows that changed, tables no longer in the state, the diff, then the marker."""
    for table in previous.keys() - state.keys():
        conn.execute(schema.sql("delete from {catalog_state} where source_schema = %s and source_table = %s"), table)
    with conn.cursor() as cursor:
        cursor.executemany(
            schema.sql(
                """insert into {catalog_state} as s
                (source_schema, source_table, definition, version, label, modify_date, catalog_read_id)
                values (%s, %s, %s, %s, %s, %s, %s)
                on conflict (source_schema, source_table) do update set definition = excluded.definition,
                    version = excluded.version, label = excluded.label, modify_date = excluded.modify_date,
                    catalog_read_id = excluded.catalog_read_id"""
            ),
            [
                (*table, Jsonb(row.definition), row.version, row.label, row.modify_date, read_id)
                for table, row in state.items()
                if previous.get(table) != row
            ],
        )
        cursor.executemany(
            schema.sql(
                """insert into {catalog_diff} (catalog_read_id, source_schema, source_table, change,
                column_name, old_definition, new_definition) values (%s, %s, %s, %s, %s, %s, %s)"""
            ),
            [
                (read_id, c.source_schema, c.source_table, c.change, c.column_name, c.old_definition, c.new_definition)
                for c in diff
            ],
        )
    conn.execute(
        schema.sql(
            """insert into {catalog_marker} (marker, catalog_read_id) values (%s, %s)
            on conflict (only_row) do update set marker = excluded.marker, catalog_read_id = excluded.catalog_read_id,
                read_at = clock_timestamp()"""
        ),
        (marker, read_id),
    )
