"""Split a run's batch into key-range partitions that Spark reads in parallel.

Changed rows are ordered by (cursor, key), NULL-cursor rows by key, and a full read
by key alone. A segment at or under the partition threshold is one partition; a
larger one is cut every `size` rows, where the size keeps the partition count under
the maximum and each partition over the minimum. The last partition of a segment
is open at its end, so rows inserted after planning are still read.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from itertools import pairwise

from extract.core.errors import LogicalError
from extract.source.catalog import SourceColumn, SourceTable
from extract.source.dialects import Dialect
from extract.source.dialects.partition_sql import boundary_query, count_query
from extract.source.jdbc import JdbcConnection


@dataclass(frozen=True)
class Segment:
    name: str
    order: tuple[SourceColumn, ...]
    base: str  # the segment's own filter, "" for all rows


@dataclass(frozen=True)
class Partition:
    number: int
    segment: str
    start: tuple[str, ...] | None  # exclusive; None: from the segment's first row
    end: tuple[str, ...] | None  # inclusive; None: to the segment's last row


@dataclass(frozen=True)
class PartitionSizing:
    threshold: int
    max_partitions: int
    min_rows: int
    fixed_rows: int | None = None  # set: cut every this many rows, whatever the segment's size

    def rows_per_partition(self, rows: int) -> int | None:
        """Rows between two cuts, or None for a single partition."""
        if self.fixed_rows is not None:
            return self.fixed_rows if rows > self.fixed_rows else None
        if rows <= self.threshold:
            return None
        size = max(self.min_rows, math.ceil(rows / self.max_partitions))
        return size if rows > size else None


#: A modify id is never NULL (SQL Server's rowversion cannot be): a run that finds one fails.
NULL_MODIFY_ID = "null modify id"


def segments(
    dialect: Dialect, table: SourceTable, cursor: SourceColumn | None, bound: datetime | int | None
) -> list[Segment]:
    keys = tuple(c for name in table.primary_key if (c := table.column(name)) is not None)
    if cursor is None or bound is None:
        return [Segment("all", keys, "")]
    quoted = dialect.quote(cursor.name)
    nulls = NULL_MODIFY_ID if dialect.is_modify_id(cursor) else "null cursor"
    return [
        Segment("changed", (cursor, *keys), f"{quoted} >= {dialect.cursor_literal(bound, cursor)}"),
        Segment(nulls, keys, f"{quoted} is null"),
    ]


def source_filter(parts: list[Segment]) -> str:
    """The filter of the whole run, as the run log shows it."""
    bases = [s.base for s in parts if s.base]
    return "(" + " or ".join(bases) + ")" if bases else ""


def plan_partitions(
    source: JdbcConnection,
    dialect: Dialect,
    table_ref: str,
    parts: list[Segment],
    sizing: PartitionSizing,
    on_counted: Callable[[int], None] = lambda rows: None,
) -> tuple[list[Partition], int]:
    """The partitions of every segment, numbered from 1, and the rows they held when counted.
    `on_counted` hears the rows counted so far after each segment's count, before its cut points are found."""
    planned: list[Partition] = []
    total = 0
    for segment in parts:
        rows = int(source.query(count_query(dialect, table_ref, segment.base))[0][0] or 0)
        if segment.name == NULL_MODIFY_ID and rows:
            raise LogicalError(f"{table_ref}: {rows:,} row(s) hold a NULL modify id, which the source never gives")
        total += rows
        on_counted(total)
        if rows == 0:
            continue
        size = sizing.rows_per_partition(rows)
        cuts: list[tuple[str, ...]] = []
        if size is not None:
            found = source.query(boundary_query(dialect, table_ref, segment.order, segment.base), [str(size)])
            cuts = [tuple(value or "" for value in row) for row in found]
            if cuts and len(cuts) * size >= rows:
                cuts.pop()  # the last row itself: the open last partition holds those rows already
        bounds: list[tuple[str, ...] | None] = [None, *cuts, None]
        for start, end in pairwise(bounds):
            planned.append(Partition(len(planned) + 1, segment.name, start, end))
    return planned, total
