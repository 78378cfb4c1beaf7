"""The T-SQL the SQL Server dialect generates parses as T-SQL (sqlglot), and quotes every name."""

from __future__ import annotations

from datetime import datetime

import pytest
import sqlglot
from sqlglot import exp

from extract.catalog import SourceColumn
from extract.dialects import TsqlDialect

DIALECT = TsqlDialect()


def col(name: str, base: str, length: int | None = None, precision: int | None = None) -> SourceColumn:
    return SourceColumn(name, base, length, precision, None, True, 1)


COLUMNS = [
    (col("BusinessEntityID", "int"), "native"),
    (col("rowguid", "uniqueidentifier"), "text"),
    (col("Demographics", "xml"), "text"),
    (col("OrganizationNode", "hierarchyid"), "text"),
    (col("SpatialLocation", "geography"), "text"),
    (col("StartTime", "time", precision=7), "text"),
    (col("Stamp", "datetimeoffset", precision=7), "text"),
    (col("Odd]Name", "nvarchar", length=50), "native"),
]


def parse(sql: str) -> exp.Expression:
    tree = sqlglot.parse_one(sql, read="tsql")
    assert tree is not None
    return tree


@pytest.mark.parametrize("cursor_base", ["datetime", "datetime2", "datetimeoffset"])
def test_batch_query_parses_and_filters_on_the_cursor(cursor_base: str) -> None:
    cursor = col("ModifiedDate", cursor_base)
    sql, where = DIALECT.batch_query(
        "Person", "Address]x", [*COLUMNS, (cursor, "native")], cursor, datetime(2026, 11, 1, 12, 30, 15, 123456)
    )
    tree = parse(sql)
    assert isinstance(tree, exp.Select)
    table = tree.find(exp.Table)
    assert table is not None and table.name == "Address]x" and table.db == "Person"
    names = [c.name for c in tree.find_all(exp.Column)]
    assert "ModifiedDate" in names and "Odd]Name" in names
    bound = DIALECT.cursor_lower_bound(datetime(2026, 11, 1, 12, 30, 15, 123456), cursor)
    assert f"'{bound:%Y-%m-%dT%H:%M:%S.%f}" in where
    assert tree.find(exp.Or) is not None and tree.find(exp.Is) is not None
    assert tree.find(exp.GTE) is not None


WATERMARK = datetime(2026, 11, 1, 12, 30, 15, 123456)


@pytest.mark.parametrize(
    ("column", "expected"),
    [
        # 1/300 s ticks: floored to a 3334 us step, then one more step back.
        (col("ModifiedDate", "datetime"), datetime(2026, 11, 1, 12, 30, 15, 119254)),
        (col("At", "datetime2", precision=7), datetime(2026, 11, 1, 12, 30, 15, 123455)),
        (col("At", "datetime2", precision=3), datetime(2026, 11, 1, 12, 30, 15, 122000)),
        (col("At", "datetime2", precision=0), datetime(2026, 11, 1, 12, 30, 14)),
        (col("At", "smalldatetime"), datetime(2026, 11, 1, 12, 29)),
        (col("On", "date"), datetime(2026, 11, 1)),
        (col("Stamp", "datetimeoffset", precision=7), datetime(2026, 11, 1, 12, 30, 15, 123455)),
    ],
)
def test_lower_bound_follows_the_cursor_precision(column: SourceColumn, expected: datetime) -> None:
    bound = DIALECT.cursor_lower_bound(WATERMARK, column)
    assert bound == expected
    # A value stamped in the watermark's tick and stored at the column's precision is inside.
    assert WATERMARK - DIALECT.cursor_resolution(column) >= bound or column.base_type == "date"
    sql, _ = DIALECT.batch_query("dbo", "T", [(column, "native")], column, WATERMARK)
    parse(sql)


def test_datetime_cursor_compares_through_datetime2() -> None:
    # A datetime column against a datetime2(7) literal: SQL Server widens the column, never the literal.
    literal = DIALECT.timestamp_literal(datetime(2026, 1, 2, 3, 4, 5, 3333), col("ModifiedDate", "datetime"))
    assert literal == "cast('2026-01-02T03:04:05.003333' as datetime2(7))"
    offset = DIALECT.timestamp_literal(datetime(2026, 1, 2), col("Stamp", "datetimeoffset", precision=7))
    assert offset == "cast('2026-01-02T00:00:00.000000+00:00' as datetimeoffset(7))"
    parse(f"select 1 where {literal} < {offset}")


def test_full_read_has_no_filter_and_nolock_only_when_asked() -> None:
    sql, where = DIALECT.batch_query("dbo", "Users", COLUMNS, None, None)
    assert where == "" and "nolock" not in sql
    parse(sql)
    sql, _ = DIALECT.batch_query("dbo", "Users", COLUMNS, None, None, read_uncommitted=True)
    assert "with (nolock)" in sql
    parse(sql)


def test_catalog_clock_tables_and_count_queries_parse() -> None:
    for sql in (DIALECT.catalog_query(), DIALECT.clock_query(), DIALECT.tables_query()):
        parse(sql)
    count = parse(DIALECT.row_count_query("Sales", "Order Details"))
    table = count.find(exp.Table)
    assert table is not None and table.name == "Order Details"


def test_catalog_query_binds_its_inputs() -> None:
    sql = DIALECT.catalog_query()
    assert sql.count("?") == 2
    assert "Person" not in sql


def test_quote_escapes_the_closing_bracket() -> None:
    assert DIALECT.quote("a]b") == "[a]]b]"
    tree = parse(f"select {DIALECT.quote('x]; drop table t; --')} from {DIALECT.table_ref('dbo', 'T')}")
    assert isinstance(tree, exp.Select)
    assert [c.name for c in tree.find_all(exp.Column)] == ["x]; drop table t; --"]


def test_catalog_rows_are_normalised() -> None:
    def row(name: str, base: str, max_length: str, precision: str, scale: str) -> list[str | None]:
        return [name, base, max_length, precision, scale, "1", "3", None]

    nvarchar, _ = DIALECT.catalog_row_to_column(row("Name", "nvarchar", "100", "0", "0"))
    assert nvarchar.type_text == "nvarchar(50)"
    blob, _ = DIALECT.catalog_row_to_column(row("Doc", "varbinary", "-1", "0", "0"))
    assert blob.type_text == "varbinary(max)"
    money, _ = DIALECT.catalog_row_to_column(row("Price", "decimal", "9", "8", "2"))
    assert money.type_text == "decimal(8,2)"
    stamp, _ = DIALECT.catalog_row_to_column(row("At", "datetime2", "8", "27", "7"))
    assert stamp.type_text == "datetime2(7)"
    assert DIALECT.is_temporal(stamp) and not DIALECT.is_temporal(money)


@pytest.mark.parametrize(
    ("column", "kind"),
    [
        (col("Id", "int"), "int"),
        (col("Price", "money"), "decimal"),
        (col("Rate", "decimal"), "decimal"),
        (col("Weight", "float"), "float"),
        (col("ModifiedDate", "datetime"), "timestamp"),
        (col("At", "datetime2", precision=7), "timestamp"),
        (col("Stamp", "datetimeoffset", precision=7), "timestamptz"),
        (col("Born", "date"), "date"),
        (col("StartTime", "time", precision=7), "time"),
        (col("Flag", "bit"), "bool"),
        (col("Photo", "varbinary", length=-1), "bytes"),
        (col("rowguid", "uniqueidentifier"), "uuid"),
        (col("Code", "nchar", length=3), "char"),
        (col("Doc", "xml"), "text"),
    ],
)
def test_checksum_query_parses_for_every_kind(column: SourceColumn, kind: str) -> None:
    sql = DIALECT.checksum_query("Sales", "T", [DIALECT.canonical_text(column, kind, 3), "'x'"])
    tree = parse(sql)
    assert isinstance(tree, exp.Select)
    assert "hashbytes('MD5'" in sql and "count_big(*)" in sql
