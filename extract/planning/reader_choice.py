"""Which reader finds a table's changes: the seed's `reader` when it names one; else what the source records
of the table's changes itself, Change Tracking before CDC; else its cursor, a modify id before a clock;
else every row."""

from __future__ import annotations

from dataclasses import dataclass

from extract.config.seeds import SyncTable
from extract.core.errors import TidemarkError
from extract.source.catalog import SourceColumn, SourceTable
from extract.source.describe import choose_cursor
from extract.source.dialects import Dialect
from extract.source.recorded_tables import ChangeSource, RecordedTables


@dataclass(frozen=True)
class ReaderChoice:
    cursor: SourceColumn | None
    #: How the source records the table's changes, when a reader of them reads it.
    changes: ChangeSource | None = None


def choose_reader(
    config: SyncTable, table: SourceTable, recorded: RecordedTables, candidates: tuple[str, ...], dialect: Dialect
) -> ReaderChoice:
    asked = config.reader
    found = {"change_tracking": recorded.change_tracking(table), "cdc": recorded.cdc(table)}
    if asked in found:
        _check_recorded(config, table, asked, found[asked])
        return ReaderChoice(None, found[asked])
    if asked == "full":
        return ReaderChoice(None)
    if asked == "auto":
        changes = found["change_tracking"] or found["cdc"]
        if changes is not None and table.key_enforced:
            return ReaderChoice(None, changes)
        return ReaderChoice(choose_cursor(table, config, candidates, dialect))
    return ReaderChoice(_cursor_of_kind(config, table, candidates, dialect, modify_id=asked == "rowversion"))


def _check_recorded(config: SyncTable, table: SourceTable, reader: str, changes: ChangeSource | None) -> None:
    named = {"change_tracking": "Change Tracking", "cdc": "CDC"}[reader]
    where = {
        "change_tracking": "sys.change_tracking_tables: ALTER TABLE ... ENABLE CHANGE_TRACKING",
        "cdc": "cdc.change_tables: sys.sp_cdc_enable_table",
    }[reader]
    if changes is None:
        raise TidemarkError(
            f"{config.key}: reader {reader}, but {named} is not enabled on the table in the source ({where}); "
            "enable it, or set another reader in seeds/sync_tables.csv"
        )
    if not table.key_enforced:
        raise TidemarkError(
            f"{config.key}: reader {reader} records the table's own primary key, but "
            "seeds/sync_tables.csv sets primary_key: leave primary_key empty, or set another reader"
        )


def _cursor_of_kind(
    config: SyncTable, table: SourceTable, candidates: tuple[str, ...], dialect: Dialect, modify_id: bool
) -> SourceColumn:
    """The cursor of a seed's `reader` rowversion (a modify id) or clock (a date-time column)."""
    kind = "a rowversion column" if modify_id else "a date-time column"
    if config.cursor_column:
        column = choose_cursor(table, config, candidates, dialect)
    else:
        columns: list[SourceColumn | None] = (
            list(table.columns) if modify_id else [table.column(name) for name in candidates]
        )
        fits = dialect.is_modify_id if modify_id else dialect.is_temporal
        column = next((c for c in columns if c is not None and fits(c)), None)
    if column is None or dialect.is_modify_id(column) != modify_id:
        found = "none" if column is None else f"{column.name!r}, of type {column.type_text}"
        raise TidemarkError(
            f"{config.key}: reader {config.reader} reads by {kind}, and the table's cursor is {found}: "
            "set cursor_column, or another reader, in seeds/sync_tables.csv"
        )
    return column
