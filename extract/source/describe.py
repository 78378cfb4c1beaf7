"""Read what the source says about a table: its columns, key and cursor."""

from __future__ import annotations

import difflib
from collections.abc import Sequence

from extract.config.seeds import SyncTable
from extract.core.errors import TidemarkError
from extract.source.catalog import SourceColumn, SourceTable
from extract.source.dialects import Dialect
from extract.source.jdbc import JdbcConnection


def describe_table(conn: JdbcConnection, dialect: Dialect, config: SyncTable) -> SourceTable:
    """Columns and primary key from the catalog (parameters bound, never formatted)."""
    rows = conn.query(dialect.catalog_query(), (config.source_schema, config.source_table))
    if not rows:
        known = [f"{s}.{t}" for s, t in conn.query(dialect.tables_query()) if s and t]
        close = difflib.get_close_matches(config.key, known, n=3)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        raise TidemarkError(f"unknown table {config.key!r}: the source has no such table or view{hint}")
    return configured_table(config, declared_table(dialect, config.source_schema, config.source_table, rows))


def declared_table(dialect: Dialect, schema: str, name: str, rows: Sequence[Sequence[str | None]]) -> SourceTable:
    """A table as its catalog rows (of `catalog_query`) declare it."""
    columns: list[SourceColumn] = []
    key_positions: dict[int, str] = {}
    for row in rows:
        column, key_ordinal = dialect.catalog_row_to_column(row)
        columns.append(column)
        if key_ordinal is not None:
            key_positions[key_ordinal] = column.name
    return SourceTable(schema, name, tuple(columns), tuple(key_positions[k] for k in sorted(key_positions)))


def configured_table(config: SyncTable, table: SourceTable) -> SourceTable:
    """The declared table with the seed's key override, checked against the seed's other settings."""
    if config.primary_key:
        missing = [name for name in config.primary_key if table.column(name) is None]
        if missing:
            raise TidemarkError(f"{config.key}: primary_key override names unknown column(s) {', '.join(missing)}")
        enforced = tuple(config.primary_key) == table.primary_key
        table = SourceTable(table.schema, table.name, table.columns, config.primary_key, enforced)
    if not table.primary_key:
        raise TidemarkError(
            f"{config.key} has no primary key: tidemark needs one to merge; "
            "declare it in the source or set primary_key in seeds/sync_tables.csv (columns joined by '|')"
        )
    check_record_id(config, table)
    check_unique_keys(config, table)
    return table


def check_record_id(config: SyncTable, table: SourceTable) -> None:
    """The seed's record_id names a column of the table outside its key (a key cannot identify a row
    across a change of that key)."""
    if config.record_id is None:
        return
    if table.column(config.record_id) is None:
        raise TidemarkError(f"{config.key}: record_id {config.record_id!r} is not a column of the table")
    if config.record_id in table.primary_key:
        raise TidemarkError(
            f"{config.key}: record_id {config.record_id!r} is part of the primary key; "
            "name a column that keeps its value when the key changes (such as a rowguid)"
        )


def check_unique_keys(config: SyncTable, table: SourceTable) -> None:
    """Each of the seed's unique_keys names columns of the table, and is not the primary key."""
    for key in config.unique_keys:
        missing = [name for name in key if table.column(name) is None]
        if missing:
            raise TidemarkError(
                f"{config.key}: unique_keys {'|'.join(key)!r} names unknown column(s) {', '.join(map(repr, missing))}"
            )
        if set(key) == set(table.primary_key):
            raise TidemarkError(f"{config.key}: unique_keys {'|'.join(key)!r} is the primary key, which is kept anyway")


def choose_cursor(
    table: SourceTable, config: SyncTable, candidates: tuple[str, ...], dialect: Dialect
) -> SourceColumn | None:
    """The configured cursor column, else a modify-id column (rowversion) if the table has one, else the
    first candidate present (exact case) with a temporal type."""
    if config.cursor_column:
        column = table.column(config.cursor_column)
        if column is None:
            raise TidemarkError(f"{config.key}: cursor_column {config.cursor_column!r} is not a column of the table")
        if not dialect.is_temporal(column) and not dialect.is_modify_id(column):
            allowed = sorted(dialect.temporal_types | dialect.modify_id_types)
            raise TidemarkError(
                f"{config.key}: cursor_column {column.name!r} has type {column.type_text}, "
                f"not one of {', '.join(allowed)}"
            )
        return column
    modify_ids = [c for c in table.columns if dialect.is_modify_id(c)]
    if modify_ids:
        return modify_ids[0]
    for name in candidates:
        column = table.column(name)
        if column is not None and dialect.is_temporal(column):
            return column
    return None
