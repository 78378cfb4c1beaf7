"""Which reader finds a table's changes: the seed's `reader` when it names one; else Change Tracking where
the source records the table's changes; else its cursor, a modify id before a clock; else every row."""

from __future__ import annotations

from dataclasses import dataclass

from extract.config.seeds import SyncTable
from extract.core.errors import TidemarkError
from extract.source.catalog import SourceColumn, SourceTable
from extract.source.change_tracking import Tracked, tracked_since
from extract.source.describe import choose_cursor
from extract.source.dialects import Dialect


@dataclass(frozen=True)
class ReaderChoice:
    cursor: SourceColumn | None
    #: The table's minimum valid Change Tracking version when Change Tracking reads it, else None.
    tracked_since: int | None = None


def choose_reader(
    config: SyncTable, table: SourceTable, tracked: Tracked, candidates: tuple[str, ...], dialect: Dialect
) -> ReaderChoice:
    asked = config.reader
    since = tracked_since(tracked, table)
    if asked == "change_tracking":
        if since is None:
            raise TidemarkError(
                f"{config.key}: reader change_tracking, but Change Tracking is not enabled on the table in the "
                "source (sys.change_tracking_tables): enable it (ALTER TABLE ... ENABLE CHANGE_TRACKING), "
                "or set another reader in seeds/sync_tables.csv"
            )
        if not table.key_enforced:
            raise TidemarkError(
                f"{config.key}: reader change_tracking records the table's own primary key, but "
                "seeds/sync_tables.csv sets primary_key: leave primary_key empty, or set another reader"
            )
        return ReaderChoice(None, since)
    if asked == "full":
        return ReaderChoice(None)
    if asked == "auto":
        if since is not None and table.key_enforced:
            return ReaderChoice(None, since)
        return ReaderChoice(choose_cursor(table, config, candidates, dialect))
    return ReaderChoice(_cursor_of_kind(config, table, candidates, dialect, modify_id=asked == "rowversion"))


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
