"""Which tables the source records the changes of itself, read once a pass for every table: those of
Change Tracking with their minimum valid versions, and CDC's capture instances with their LSNs."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TypeVar

from extract.source.catalog import SourceTable
from extract.source.dialects import Dialect
from extract.source.jdbc import JdbcConnection

T = TypeVar("T")
CHANGE_TRACKING = "change_tracking"
CDC = "cdc"


@dataclass(frozen=True)
class CaptureInstance:
    name: str
    start_lsn: int
    min_lsn: int
    #: The table's columns it captures, case-folded (sys.sp_cdc_enable_table's @captured_column_list).
    columns: frozenset[str] = frozenset()

    def captures(self, names: Iterable[str]) -> bool:
        """Whether its change rows hold every one of the columns `names`."""
        return all(name.casefold() in self.columns for name in names)


@dataclass(frozen=True)
class ChangeSource:
    """How the source records one table's changes, as the pass found it."""

    #: The reader (extract/lifecycle/reader.py ReaderKind): change_tracking or cdc.
    reader: str
    #: Change Tracking's minimum valid version; CDC's lowest minimum LSN of the table's capture instances.
    min_valid: int
    #: CDC's capture instances of the table, oldest first.
    instances: tuple[CaptureInstance, ...] = ()


@dataclass(frozen=True)
class RecordedTables:
    #: (schema, table) of each table Change Tracking records, with its minimum valid version.
    tracked: Mapping[tuple[str, str], int]
    #: (schema, table) of each table CDC captures, with its capture instances, oldest first.
    captured: Mapping[tuple[str, str], tuple[CaptureInstance, ...]]

    def change_tracking(self, table: SourceTable) -> ChangeSource | None:
        found = for_table(self.tracked, table)
        return None if found is None else ChangeSource(CHANGE_TRACKING, found)

    def cdc(self, table: SourceTable) -> ChangeSource | None:
        found = for_table(self.captured, table)
        return None if not found else ChangeSource(CDC, min(i.min_lsn for i in found), found)


def for_table(by_table: Mapping[tuple[str, str], T], table: SourceTable) -> T | None:
    """The entry of `table` in a listing by (schema, table)."""
    found = by_table.get((table.schema, table.name))
    if found is not None:
        return found
    # SQL Server compares names without case unless the database's collation says otherwise.
    folded = (table.schema.lower(), table.name.lower())
    matches = [v for (s, t), v in by_table.items() if (s.lower(), t.lower()) == folded]
    return matches[0] if len(matches) == 1 else None


def _installed(source: JdbcConnection, query: str | None) -> bool:
    return query is None or str(source.query(query)[0][0]) == "1"


def tracked_tables(source: JdbcConnection, dialect: Dialect) -> dict[tuple[str, str], int]:
    """Every table Change Tracking records, with its minimum valid version, in one query."""
    if not _installed(source, dialect.change_tracking_installed_query()):
        return {}
    return {(str(s), str(t)): int(str(v)) for s, t, v in source.query(dialect.change_tracking_query())}


def capture_instances(source: JdbcConnection, dialect: Dialect) -> dict[tuple[str, str], tuple[CaptureInstance, ...]]:
    """Every capture instance of every table CDC captures, oldest first, in one query."""
    if not _installed(source, dialect.cdc_installed_query()):
        return {}
    columns: dict[str, set[str]] = {}
    for name, column in source.query(dialect.cdc_captured_columns_query()):
        columns.setdefault(str(name), set()).add(str(column).casefold())
    instances: dict[tuple[str, str], list[CaptureInstance]] = {}
    for schema, table, name, start, low in source.query(dialect.cdc_instances_query()):
        captured = frozenset(columns.get(str(name), ()))
        instance = CaptureInstance(str(name), int(str(start), 16), int(str(low), 16), captured)
        instances.setdefault((str(schema), str(table)), []).append(instance)
    return {key: tuple(sorted(found, key=lambda i: i.start_lsn)) for key, found in instances.items()}


def recorded_tables(source: JdbcConnection, dialect: Dialect) -> RecordedTables:
    return RecordedTables(tracked_tables(source, dialect), capture_instances(source, dialect))
