"""The dialect interface: quoting, clock, catalog, temporal types, literals, batch SQL."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from datetime import datetime, time, timedelta
from typing import Literal

from extract.core.quoting import sql_string
from extract.source.catalog import SourceColumn
from extract.source.dialects.recorded_changes import RecordedChangesSql

EpochUnit = Literal["day", "microsecond"]


def epoch_unit(target_type: str) -> EpochUnit | None:
    """How a calendar value is read for a column of `target_type`: the landing classes
    (extract/landing/jvm) write an integer as a date, a bigint as a timestamp."""
    base = target_type.split("(", 1)[0].strip().lower()
    if base == "date":
        return "day"
    if base in {"timestamp", "timestamptz", "timestamp without time zone", "timestamp with time zone"}:
        return "microsecond"
    return None


#: Arguments per concat_ws call in a row text: Postgres takes at most 100 arguments to a function,
#: SQL Server's concat_ws 254, and a table can have 1,024 columns (SQL Server) or 1,600 (Postgres).
ROW_TEXT_CHUNK = 90


def text_or_null_mark(expression: str) -> str:
    """A text expression with NULL written as \\N, as a row's text has it."""
    return f"coalesce({expression}, '\\N')"


def joined_text(separator: str, expressions: Sequence[str]) -> str:
    """The expressions, NULL written as \\N, joined by `separator` with concat_ws calls of at most
    ROW_TEXT_CHUNK arguments each, nested: none of the parts is NULL, so nesting joins the same text."""
    parts = [text_or_null_mark(e) for e in expressions]
    if len(parts) == 1:
        return parts[0]  # the same text, without a call per row (a one-column key's text, of every row)
    while len(parts) > ROW_TEXT_CHUNK:
        chunks = [parts[i : i + ROW_TEXT_CHUNK] for i in range(0, len(parts), ROW_TEXT_CHUNK)]
        parts = [f"concat_ws({separator}, {', '.join(chunk)})" for chunk in chunks]
    return f"concat_ws({separator}, {', '.join(parts)})"


class Dialect(RecordedChangesSql, ABC):
    """One source database family. Subclasses hold every piece of SQL that differs."""

    name: str
    #: Base type names (lower case) a cursor column may have.
    temporal_types: frozenset[str]
    #: Base type names whose time values carry their own offset.
    zoned_types: frozenset[str] = frozenset()
    #: Base type names of a modify id (SQL Server's rowversion): a number every insert and update
    #: takes anew from one increasing counter of the database.
    modify_id_types: frozenset[str] = frozenset()
    #: Base type names of the dates and date-times read as numbers (`epoch_expression`).
    calendar_types: frozenset[str] = frozenset()

    @abstractmethod
    def quote(self, identifier: str) -> str:
        """Quote one identifier so that any character in it is taken literally."""

    def table_ref(self, schema: str, table: str) -> str:
        return f"{self.quote(schema)}.{self.quote(table)}"

    @abstractmethod
    def clock_query(self) -> str:
        """SQL returning one row, one column: the server's UTC clock as 'YYYY-MM-DD HH:MM:SS.f...'."""

    @abstractmethod
    def catalog_query(self) -> str:
        """SQL taking (schema, table) as ? parameters; see `catalog_row_to_column`."""

    @abstractmethod
    def tables_query(self) -> str:
        """SQL returning (schema, table) of every user table, for suggestions in errors."""

    @abstractmethod
    def tables_with_modify_dates_query(self) -> str:
        """SQL returning (schema, table, modify date text) of every user table and view: when its
        definition last changed, by the clock of `catalog_clock_query`."""

    @abstractmethod
    def columns_changed_since_query(self) -> str:
        """SQL taking a modify date text as ? parameter, returning (schema, table) and then the columns
        of `catalog_query` for every table whose definition changed at or after it."""

    def catalog_clock_query(self) -> str:
        """The clock that stamps modify dates, in the form they take."""
        return self.clock_query()

    def tracks_modify_dates_query(self) -> str | None:
        """SQL returning '1' when the source stamps modify dates, '0' when not (every catalog read is then
        a full one); None when it always does."""
        return None

    @abstractmethod
    def catalog_row_to_column(self, row: Sequence[str | None]) -> tuple[SourceColumn, int | None]:
        """Turn one catalog row into a column and its position in the primary key (None if not in it)."""

    @abstractmethod
    def timestamp_literal(self, value: datetime, column: SourceColumn) -> str:
        """A typed literal comparable with `column`.

        Spark's JDBC reader takes no bind parameters, so the watermark has to be
        part of the query text. It is only ever rendered from a `datetime` the
        source clock produced, never from user text.
        """

    @abstractmethod
    def text_expression(self, column: SourceColumn) -> str:
        """An expression reading `column` as text, for types the JDBC driver or Spark cannot carry."""

    def table_hint(self, read_uncommitted: bool) -> str:
        return ""

    @abstractmethod
    def position_text(self, column: SourceColumn, qualifier: str = "") -> str:
        """`column` as text that casts back to exactly the same value (a partition boundary)."""

    def key_text(self, column: SourceColumn, qualifier: str = "") -> str:
        """Key `column` as text its replica column casts back exactly (a tombstone the source names)."""
        return self.position_text(column, qualifier)

    @abstractmethod
    def position_type(self, column: SourceColumn) -> str:
        """The type a position text is cast back to."""

    def position_literal(self, text: str, column: SourceColumn) -> str:
        """A position as a typed literal, for Spark's reader, which takes no parameters."""
        return f"cast({sql_string(text)} as {self.position_type(column)})"

    def count_expression(self) -> str:
        return "count(*)"

    def row_count_query(self, schema: str, table: str) -> str:
        return f"select {self.count_expression()} from {self.table_ref(schema, table)}"

    @abstractmethod
    def canonical_text(self, column: SourceColumn, kind: str, length: int | None) -> str:
        """`column` as the canonical text of `kind` (see extract/project/verify.py), NULL when it is NULL."""

    def plain_text_alike(self, column: SourceColumn, target_type: str, kind: str) -> bool:
        """Whether `column` and its replica column of `target_type` (canonical form `kind`) print one value
        as the same text with no conversion, so that a row hash can take `plain_text` on both sides."""
        return False

    def plain_text(self, column: SourceColumn) -> str:
        """`column` as this database prints it; only where `plain_text_alike`."""
        raise NotImplementedError(f"{type(self).__name__} prints no column alike with the replica")

    @abstractmethod
    def row_text(self, expressions: Sequence[str]) -> str:
        """The expressions joined with U+001F, NULL written as \\N: what a row's hash is taken of."""

    @abstractmethod
    def hash_bits(self, text: str, bits: int) -> str:
        """The md5 of `text` (its UTF-8 bytes) as a bigint: with bits=64 its first 64 bits, signed; with
        bits=60 the 60 bits after the first four, never negative."""

    def exact_sum(self, expression: str) -> str:
        """sum(`expression`) of bigints, exactly, as a decimal of 38 digits (no overflow)."""
        return f"cast(sum(cast({expression} as decimal(38, 0))) as decimal(38, 0))"

    def in_integers(self, expression: str, values: Sequence[int]) -> str:
        """`expression` is one of `values` (integers tidemark computed, never user input)."""
        return f"{expression} in ({', '.join(str(int(v)) for v in values)})"

    def checksum_query(self, schema: str, table: str, expressions: Sequence[str]) -> str:
        """One row: row count and the sum over rows of the first 64 bits of md5(row text), as text.

        The sum does not depend on row order, so no sort is needed on either side.
        """
        return f"select {self.checksum_aggregates(expressions)} from {self.table_ref(schema, table)}"

    def checksum_aggregates(self, expressions: Sequence[str]) -> str:
        """The select list of `checksum_query`, for a caller that supplies its own FROM."""
        row_hash = self.hash_bits(self.row_text(expressions), 64)
        return f"{self.count_expression()}, cast(coalesce({self.exact_sum(row_hash)}, 0) as varchar(40))"

    def is_temporal(self, column: SourceColumn) -> bool:
        return column.base_type in self.temporal_types

    def is_modify_id(self, column: SourceColumn) -> bool:
        return column.base_type in self.modify_id_types

    def modify_id_query(self) -> str:
        """SQL returning one row, one column: the lowest modify id a transaction still in flight may
        commit (or the next to be given), as '0x' and 16 upper-case hex digits."""
        raise NotImplementedError(f"{self.name} has no modify-id columns")

    def modify_id_literal(self, value: int, column: SourceColumn) -> str:
        """A literal comparable with modify-id column `column` (from a number the source gave)."""
        raise NotImplementedError(f"{self.name} has no modify-id columns")

    def cursor_literal(self, bound: datetime | int, column: SourceColumn) -> str:
        """Where the changed-rows filter starts, as a literal comparable with the cursor `column`."""
        if isinstance(bound, datetime):
            return self.timestamp_literal(bound, column)
        return self.modify_id_literal(bound, column)

    @abstractmethod
    def cursor_resolution(self, column: SourceColumn) -> timedelta:
        """The smallest step between two values the cursor column can hold."""

    def cursor_lower_bound(self, watermark: datetime, column: SourceColumn) -> datetime:
        """Where the filter starts for `watermark`, at the cursor column's own precision.

        A value stamped in the tick the clock was read can be stored rounded down to
        the column's precision (datetime keeps 1/300 s, timestamp(0) whole seconds) or
        truncated (a date). Flooring to the column's step and going one step further
        back keeps such a row inside the filter; re-read rows merge as unchanged.
        """
        step = self.cursor_resolution(column)
        if step >= timedelta(days=1):
            return datetime.combine(watermark.date(), time.min)
        micros = step // timedelta(microseconds=1)
        since_epoch = (watermark - datetime(1970, 1, 1)) // timedelta(microseconds=1)
        return watermark - timedelta(microseconds=since_epoch % micros) - step

    def epoch_expression(self, column: SourceColumn, unit: EpochUnit) -> str:
        """`column` as whole days or microseconds since 1970-01-01 00:00 (floored), an integer."""
        raise NotImplementedError(f"{self.name} has no calendar types")

    def select_expression(self, column: SourceColumn, transfer: str, target_type: str) -> str:
        if transfer == "text":
            return f"{self.text_expression(column)} as {self.quote(column.name)}"
        unit = epoch_unit(target_type) if column.base_type in self.calendar_types else None
        if unit is not None:
            # The JDBC drivers hand dates and date-times to Spark through java.sql.Date and Timestamp,
            # whose calendar is Julian before 1582-10-15: 1582-10-05 to 1582-10-14 do not exist there and
            # shift by ten days. A number of days or microseconds crosses every layer unchanged.
            return f"{self.epoch_expression(column, unit)} as {self.quote(column.name)}"
        return self.quote(column.name)
