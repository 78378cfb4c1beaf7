"""Every query the Change Tracking and CDC readers send to SQL Server parses as T-SQL, and names each table,
column and capture instance quoted. sqlglot's T-SQL does not know CHANGETABLE(CHANGES t, v): the dialect
below teaches it that one form, and nothing else is accepted that sqlglot would refuse."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

import pytest
import sqlglot
from sqlglot import exp
from sqlglot.dialects.tsql import TSQL
from sqlglot.errors import ParseError
from sqlglot.tokens import TokenType

from extract.partitions.plan import Segment
from extract.source import cdc
from extract.source.catalog import SourceColumn, SourceTable
from extract.source.change_tracking import changed_rows_relation, deleted_keys_query
from extract.source.changed_keys import keys_gone, rows_of_keys
from extract.source.dialects import TsqlDialect
from extract.source.dialects.partition_sql import (
    boundary_query,
    count_query,
    order_aliases,
    range_filter,
    segment_query,
)

DIALECT = TsqlDialect()


class ChangeTrackingTsql(TSQL):
    class Parser(TSQL.Parser):
        FUNCTION_PARSERS: ClassVar[dict[str, Callable[[Any], exp.Expression]]] = {
            **TSQL.Parser.FUNCTION_PARSERS,
            "CHANGETABLE": lambda self: self._parse_changetable(),
        }

        def _parse_changetable(self) -> exp.Expression:
            """CHANGES, a table's (schema-qualified) name, a comma, a version expression."""
            if not self._match_text_seq("CHANGES"):
                self.raise_error("Expected CHANGES")
            table = self._parse_table_parts()
            if not self._match(TokenType.COMMA):
                self.raise_error("Expected ,")
            return exp.Anonymous(this="CHANGETABLE", expressions=[table, self._parse_bitwise()])


def parse(sql: str) -> exp.Expression:
    tree = sqlglot.parse_one(sql, read=ChangeTrackingTsql)
    assert tree is not None
    return tree


def col(name: str, base: str, length: int | None = None) -> SourceColumn:
    return SourceColumn(name, base, length, None, None, False, 1)


KEYS = [col("Order]Id", "int"), col("Line's", "varbinary", 16)]
TABLE = SourceTable("Sales]x", "Order Lines'", [*KEYS, col("Qty", "int")], ("Order]Id", "Line's"))


def test_the_extended_dialect_still_refuses_what_is_not_changetable_changes() -> None:
    with pytest.raises(ParseError):
        parse("select 1 from changetable(version [dbo].[T], 5) as ct")
    with pytest.raises(ParseError):
        parse("select 1 from changetable(changes [dbo].[T] 5) as ct")


def test_the_catalog_and_version_queries_parse() -> None:
    tables = {t.name for t in parse(DIALECT.change_tracking_query()).find_all(exp.Table)}
    assert tables == {"change_tracking_tables", "tables", "schemas"}
    version = parse(DIALECT.change_tracking_version_query())
    assert "CHANGE_TRACKING_CURRENT_VERSION" in version.sql(dialect="tsql").upper()


def _run_queries() -> list[str]:
    """What one incremental run sends: the count, the partition ends and a partition's rows of the
    changed rows, then the keys that are gone."""
    relation = changed_rows_relation(DIALECT, TABLE, KEYS, 1234)
    order = tuple(KEYS)
    segment = Segment("changed", order, "")
    cut = tuple("it's ]0x01" for _ in order)
    rows = segment_query(DIALECT, relation, "[Qty]", order, segment.base)
    where = range_filter(DIALECT, order_aliases(order), "", cut, cut)
    return [
        count_query(DIALECT, relation, segment.base),
        boundary_query(DIALECT, relation, order, segment.base),
        f"select [Qty] from ({rows}) tidemark_segment where ({where})",
        deleted_keys_query(DIALECT, TABLE, KEYS, 1234),
        f"select 0 as probe, case when exists (select 1 from {DIALECT.changes_relation('Sales]x', 'Order Lines', 7)})"
        " then 1 else 0 end as found",
    ]


@pytest.mark.parametrize("number", range(5))
def test_every_query_of_a_run_parses_and_quotes_every_name(number: int) -> None:
    query = _run_queries()[number]
    tree = parse(query)
    changes = [f for f in tree.find_all(exp.Anonymous) if f.name.upper() == "CHANGETABLE"]
    assert changes, query
    for function in changes:
        tracked, version = function.expressions
        assert isinstance(tracked, exp.Table) and tracked.args["this"].quoted and tracked.args["db"].quoted
        assert isinstance(version, exp.Literal) and version.this in {"1234", "7"}
    names = {i.this for i in tree.find_all(exp.Identifier) if i.quoted}
    assert {"Sales]x"} <= names, query
    unquoted = {i.this for i in tree.find_all(exp.Identifier) if not i.quoted}
    assert unquoted <= {
        "ct",
        "t",
        "tidemark_changed",
        "tidemark_segment",
        "ranked",
        "tidemark_row",
        "probe",
        "found",
    } | {f"position_{n}" for n in (1, 2)}, query


def _cdc_queries() -> list[str]:
    """What one CDC run sends: the catalog's (instances and their columns), the highest LSN, and, over the
    last image of each key in an LSN range, the count, the partition ends and a partition's rows; then the
    keys that are gone, and the same two over the keys alone (a run that ends where a newer capture
    instance begins, or reads one that lacks columns)."""
    instance = "Sales]x_Order Lines'"
    relation = cdc.changed_rows_relation(DIALECT, instance, KEYS, 0x1234, 0xABCDEF)
    order = tuple(KEYS)
    keys_only = cdc.changed_keys(DIALECT, instance, KEYS, 0x1234, 0xABCDEF)
    return [
        DIALECT.cdc_installed_query(),
        DIALECT.cdc_instances_query(),
        DIALECT.cdc_captured_columns_query(),
        DIALECT.cdc_max_lsn_query(),
        count_query(DIALECT, relation, ""),
        boundary_query(DIALECT, relation, order, ""),
        f"select [Qty] from ({segment_query(DIALECT, relation, '[Qty]', order, '')}) tidemark_segment",
        cdc.deleted_keys_query(DIALECT, instance, KEYS, 0x1234, 0xABCDEF),
        count_query(DIALECT, rows_of_keys(DIALECT, TABLE, KEYS, keys_only), ""),
        keys_gone(DIALECT, TABLE, KEYS, keys_only),
    ]


@pytest.mark.parametrize("number", range(10))
def test_every_query_of_a_cdc_run_parses_and_reads_the_lsn_range_asked(number: int) -> None:
    query = _cdc_queries()[number]
    tree = parse(query)
    if number < 4:
        return
    names = {i.this for i in tree.find_all(exp.Identifier) if i.quoted}
    assert "fn_cdc_get_all_changes_Sales]x_Order Lines'" in names, query
    assert "sys.fn_cdc_increment_lsn(0x00000000000000001234), 0x00000000000000ABCDEF, N'all update old'" in query
