"""Every query a catalog read sends to SQL Server parses as T-SQL (sqlglot), and the one that takes
a modify date binds it as a parameter."""

from __future__ import annotations

import pytest
import sqlglot
from sqlglot import exp

from extract.source.dialects import TsqlDialect

DIALECT = TsqlDialect()
QUERIES = {
    "columns of one table": DIALECT.catalog_query(),
    "columns changed since": DIALECT.columns_changed_since_query(),
    "tables with modify dates": DIALECT.tables_with_modify_dates_query(),
    "catalog clock": DIALECT.catalog_clock_query(),
    "tables": DIALECT.tables_query(),
}


@pytest.mark.parametrize("name", QUERIES)
def test_catalog_queries_parse_as_tsql(name: str) -> None:
    parsed = sqlglot.parse_one(QUERIES[name], read="tsql")
    assert isinstance(parsed, exp.Select)


def test_the_changed_since_query_filters_on_modify_date_by_a_parameter() -> None:
    parsed = sqlglot.parse_one(DIALECT.columns_changed_since_query(), read="tsql")
    where = parsed.args["where"]
    assert [p for p in where.find_all(exp.Placeholder)], "the modify date is bound, never formatted"
    assert "modify_date" in where.sql(dialect="tsql")
    selected = [e.alias_or_name for e in parsed.expressions]
    assert selected[:3] == ["name", "name", "column_name"]
