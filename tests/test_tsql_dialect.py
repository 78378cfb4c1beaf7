"""The T-SQL the SQL Server dialect generates parses as T-SQL (sqlglot), and quotes every name."""

from __future__ import annotations

from datetime import datetime

import pytest
import sqlglot
from sqlglot import exp

from extract.partitions.plan import segments
from extract.source.catalog import SourceColumn, SourceTable
from extract.source.dialects import TsqlDialect
from extract.source.dialects.partition_sql import (
    boundary_query,
    count_query,
    order_aliases,
    range_filter,
    segment_query,
)

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


WATERMARK = datetime(2026, 11, 1, 12, 30, 15, 123456)
#: The seeds' type map's targets of SQL Server's calendar types (read as numbers of days or microseconds).
CALENDAR_TARGETS = {
    "date": "date",
    "datetime": "timestamp(3)",
    "datetime2": "timestamp(6)",
    "smalldatetime": "timestamp(0)",
}


def page_queries(
    table: SourceTable, columns: list[tuple[SourceColumn, str]], cursor: SourceColumn | None, hint: bool = False
) -> list[str]:
    """Every query one run sends for `table`, per segment: its count, its partition ends, and the rows
    of a partition closed or open at either end, as Spark sends them (its columns, then the filter)."""
    bound = DIALECT.cursor_lower_bound(WATERMARK, cursor) if cursor else None
    ref = DIALECT.table_ref(table.schema, table.name) + DIALECT.table_hint(hint)
    select_list = ", ".join(
        DIALECT.select_expression(c, t, CALENDAR_TARGETS.get(c.base_type, "text")) for c, t in columns
    )
    queries = []
    for segment in segments(DIALECT, table, cursor, bound):
        queries.append(count_query(DIALECT, ref, segment.base))
        queries.append(boundary_query(DIALECT, ref, segment.order, segment.base))
        # Positions as the source writes them, quotes and brackets included.
        cut = tuple("it's ]2026-11-01 12:30:15.1234567" for _ in segment.order)
        relation = segment_query(DIALECT, ref, select_list, segment.order, segment.base)
        names = ", ".join(DIALECT.quote(c.name) for c, _ in columns)
        for start, end in ((None, None), (None, cut), (cut, None), (cut, cut)):
            where = range_filter(DIALECT, order_aliases(segment.order), "", start, end)
            queries.append(f"select {names} from ({relation}) tidemark_segment where ({where})")
    return queries


@pytest.mark.parametrize("cursor_base", ["datetime", "datetime2", "datetimeoffset"])
def test_page_queries_parse_and_filter_on_the_cursor(cursor_base: str) -> None:
    cursor = col("ModifiedDate", cursor_base)
    key = col("Odd]Name", "nvarchar", length=50)
    table = SourceTable("Person", "Address]x", (key, cursor), ("Odd]Name",))
    queries = page_queries(table, [*COLUMNS, (cursor, "native")], cursor)
    assert len(queries) == 12
    bound = DIALECT.cursor_lower_bound(WATERMARK, cursor)
    for sql in queries:
        tree = parse(sql)
        assert isinstance(tree, exp.Select)
        tables = [t for t in tree.find_all(exp.Table)]
        assert any(t.name == "Address]x" and t.db == "Person" for t in tables)
    changed_rows = queries[3]
    assert f"'{bound:%Y-%m-%dT%H:%M:%S.%f}" in changed_rows and "N'it''s ]2026" in changed_rows
    # Partitions filter on the cursor and key as the source holds them, not as the select list reads them.
    assert "[ModifiedDate] as [tidemark_order_1], [Odd]]Name] as [tidemark_order_2]" in changed_rows
    assert "where (([tidemark_order_1] < cast(" in changed_rows
    assert "row_number() over (order by [ModifiedDate], [Odd]]Name])" in queries[1] and queries[1].count("?") == 1
    assert "count_big(*)" in queries[0] and "[ModifiedDate] is null" in queries[6]


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
    table = SourceTable("dbo", "T", (col("Id", "int"), column), ("Id",))
    for sql in page_queries(table, [(column, "native")], column):
        parse(sql)


def test_datetime_cursor_compares_through_datetime2() -> None:
    # A datetime column against a datetime2(7) literal: SQL Server widens the column, never the literal.
    literal = DIALECT.timestamp_literal(datetime(2026, 1, 2, 3, 4, 5, 3333), col("ModifiedDate", "datetime"))
    assert literal == "cast('2026-01-02T03:04:05.003333' as datetime2(7))"
    offset = DIALECT.timestamp_literal(datetime(2026, 1, 2), col("Stamp", "datetimeoffset", precision=7))
    assert offset == "cast('2026-01-02T00:00:00.000000+00:00' as datetimeoffset(7))"
    parse(f"select 1 where {literal} < {offset}")


def test_full_read_pages_by_key_and_uses_nolock_only_when_asked() -> None:
    table = SourceTable("dbo", "Users", (col("BusinessEntityID", "int"),), ("BusinessEntityID",))
    plain = page_queries(table, COLUMNS, None)
    assert len(plain) == 6
    assert all("nolock" not in sql and "ModifiedDate" not in sql for sql in plain)
    for sql in plain:
        parse(sql)
    hinted = page_queries(table, COLUMNS, None, hint=True)
    assert all("with (nolock)" in sql for sql in hinted)
    for sql in hinted:
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


def test_an_open_partition_reads_every_row_of_its_segment() -> None:
    order = [col("A", "int")]
    assert range_filter(DIALECT, order, "", None, None) == "1 = 1"
    assert range_filter(DIALECT, order, "[X] is null", None, None) == "[X] is null"
    assert range_filter(DIALECT, order, "", ("5",), None) == "([A] > cast(N'5' as int))"


def test_watermark_keeps_seven_digits_and_starts_no_later() -> None:
    from extract.source.watermarks import parse_watermark

    assert parse_watermark("2026-11-01 12:30:15.1234567") == datetime(2026, 11, 1, 12, 30, 15, 123456)
    assert parse_watermark("2026-11-01 12:30:15") == datetime(2026, 11, 1, 12, 30, 15)
    # Seven-digit readings sort as text in the order of time, as the run log compares them.
    readings = ["2026-11-01 12:30:15.1234567", "2026-11-01 12:30:15.1234568", "2026-11-01 12:30:16.0000000"]
    assert sorted(readings) == readings


def test_a_rowversion_cursor_reads_from_the_lowest_active_modify_id() -> None:
    cursor = col("RowVer", "timestamp")
    key = col("Id", "int")
    table = SourceTable("Sales", "Orders", (key, cursor), ("Id",))
    assert DIALECT.is_modify_id(cursor) and DIALECT.is_modify_id(col("Rv", "rowversion"))
    assert not DIALECT.is_modify_id(col("ModifiedDate", "datetime2"))
    parse(DIALECT.modify_id_query())
    assert "min_active_rowversion()" in DIALECT.modify_id_query()
    parts = segments(DIALECT, table, cursor, 2001)
    assert parts[0].base == "[RowVer] >= 0x00000000000007D1"
    assert parts[1].name == "null modify id"
    for segment in parts:
        for sql in (
            count_query(DIALECT, "[Sales].[Orders]", segment.base),
            boundary_query(DIALECT, "[Sales].[Orders]", segment.order, segment.base),
        ):
            parse(sql)


@pytest.mark.parametrize(
    ("column", "target", "read"),
    [
        (col("Born", "date"), "date", "datediff(day, cast('1970-01-01' as date), [Born])"),
        (
            col("At", "datetime2", precision=7),
            "timestamp(6)",
            "datediff_big(microsecond, cast('1970-01-01' as datetime2(7)), [At])",
        ),
        (
            col("ModifiedDate", "datetime"),
            "timestamp(3)",
            "datediff_big(microsecond, cast('1970-01-01' as datetime2(7)), cast([ModifiedDate] as datetime2(3)))",
        ),
        (col("ModifiedDate", "datetime"), "text", None),
        (col("Stamp", "datetimeoffset", precision=7), "timestamptz", None),
    ],
)
def test_calendar_values_are_read_as_numbers(column: SourceColumn, target: str, read: str | None) -> None:
    # Never through java.sql.Date or Timestamp, whose calendar has no 1582-10-05 to 1582-10-14.
    expression = DIALECT.select_expression(column, "native", target)
    quoted = DIALECT.quote(column.name)
    assert expression == (quoted if read is None else f"{read} as {quoted}")
    parse(f"select {expression} from [dbo].[T]")


def test_a_row_text_of_1024_columns_passes_no_function_more_than_100_arguments() -> None:
    columns = [col(f"C{n}", "int") for n in range(1024)]
    sql = DIALECT.checksum_query("dbo", "Wide", [DIALECT.canonical_text(c, "int", None) for c in columns])
    calls = list(parse(sql).find_all(exp.ConcatWs))
    assert len(calls) > 1
    assert max(len(call.expressions) for call in calls) <= 100
