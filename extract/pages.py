"""Read a run's batch as keyset pages: changed rows in (cursor, key) order, then NULL-cursor rows by key.

A full read (no watermark yet, or no cursor column) pages by key alone. Each page is
landed before the next is read, and its end position is what the run log records
as `last_pk_synced`.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime

from pyspark.sql import DataFrame, SparkSession

from extract.catalog import SourceColumn, SourceTable
from extract.dialects import Dialect
from extract.dialects.paging import page_end_query, page_rows_filter, page_rows_query, start_parameters
from extract.jdbc import JdbcConnection
from extract.urls import DatabaseUrl


@dataclass(frozen=True)
class Segment:
    name: str
    order: tuple[SourceColumn, ...]
    base: str  # the segment's own filter, "" for all rows


@dataclass(frozen=True)
class Resume:
    segment: str
    after: tuple[str, ...]
    pages: int

    @classmethod
    def from_log(cls, last_pk_synced: str, pages: int, parts: list[Segment]) -> Resume | None:
        """The point to go on from, or None when the recorded position does not fit this run's segments."""
        position = json.loads(last_pk_synced)
        segment = next((s for s in parts if s.name == position.get("segment")), None)
        after = tuple(str(v) for v in position.get("after", []))
        if segment is None or len(after) != len(segment.order):
            return None
        return cls(segment.name, after, pages)


@dataclass(frozen=True)
class Page:
    number: int
    segment: str
    end: tuple[str, ...]
    frame: DataFrame


def segments(
    dialect: Dialect, table: SourceTable, cursor: SourceColumn | None, bound: datetime | None
) -> list[Segment]:
    keys = tuple(c for name in table.primary_key if (c := table.column(name)) is not None)
    if cursor is None or bound is None:
        return [Segment("all", keys, "")]
    quoted = dialect.quote(cursor.name)
    return [
        Segment("changed", (cursor, *keys), f"{quoted} >= {dialect.timestamp_literal(bound, cursor)}"),
        Segment("null cursor", keys, f"{quoted} is null"),
    ]


def source_filter(parts: list[Segment]) -> str:
    """The filter of the whole run, as the run log shows it."""
    bases = [s.base for s in parts if s.base]
    return "(" + " or ".join(bases) + ")" if bases else ""


@dataclass
class PageReader:
    dialect: Dialect
    source: JdbcConnection
    spark: SparkSession
    url: DatabaseUrl
    table: SourceTable
    select_list: str
    read_uncommitted: bool
    page_rows: int

    def _table_ref(self) -> str:
        return self.dialect.table_ref(self.table.schema, self.table.name) + self.dialect.table_hint(
            self.read_uncommitted
        )

    def _frame(self, where: str) -> DataFrame:
        query = page_rows_query(self._table_ref(), self.select_list, where)
        return (
            self.spark.read.format("jdbc")
            .option("url", self.url.jdbc_url)
            .option("query", query)
            .option("fetchsize", "10000")
            .options(**self.url.jdbc_properties())
            .load()
        )

    def pages(self, parts: list[Segment], resume: Resume | None = None) -> Iterator[Page]:
        """Pages after the resume point (a killed run's last recorded page), or from the start."""
        begin = 0 if resume is None else [s.name for s in parts].index(resume.segment)
        number = 0 if resume is None else resume.pages
        for index, segment in enumerate(parts[begin:], start=begin):
            start: tuple[str, ...] | None = resume.after if resume is not None and index == begin else None
            while True:
                sql = page_end_query(
                    self.dialect, self._table_ref(), segment.order, segment.base, start is not None, self.page_rows
                )
                rows = self.source.query(sql, start_parameters(start) if start else ())
                if not rows:
                    break
                end = tuple(value or "" for value in rows[0])
                number += 1
                where = page_rows_filter(self.dialect, segment.order, segment.base, start, end)
                yield Page(number, segment.name, end, self._frame(where))
                start = end
