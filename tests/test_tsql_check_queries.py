"""The queries a pass's check sends to SQL Server parse as T-SQL (sqlglot): whether a table has rows to
read, stamped after its watermark or only before it, the keys and row hashes of those rows, which the
pass compares with the replica's, and their count and hash sum, which a later check compares with the last."""

from __future__ import annotations

from datetime import datetime

import pytest
import sqlglot
from sqlglot import exp

from extract.partitions.plan import segments
from extract.readers.merged_already import rows_query, totals_query
from extract.readers.unchanged import Probe, newer_rows_test, probe_query
from extract.reconcile.hashes import row_hashes
from tests.tsql_plans import CURSORS, DIALECT, KEYS, plan_of

WATERMARK = "2026-11-28 17:45:12.1234567"


@pytest.mark.parametrize("cursor_kind", list(CURSORS))
@pytest.mark.parametrize("key_kind", list(KEYS))
def test_the_check_queries_parse_as_tsql(key_kind: str, cursor_kind: str) -> None:
    plan = plan_of(KEYS[key_kind], CURSORS[cursor_kind])
    table_ref = DIALECT.table_ref(plan.table.schema, plan.table.name)
    since = datetime(2026, 11, 28, 17, 40)
    bound = 2001 if cursor_kind == "modify id" else DIALECT.cursor_lower_bound(since, CURSORS["clock"].source)
    # The changed rows, and those of NULL cursor.
    conditions = tuple(s.base for s in segments(DIALECT, plan.table, plan.cursor, bound) if s.base)
    tests = tuple(f"exists (select 1 from {table_ref} where {c})" for c in conditions)
    newer = newer_rows_test(DIALECT, table_ref, plan.cursor, WATERMARK)
    probes = [Probe(plan, WATERMARK, tests, newer, conditions), Probe(plan, WATERMARK, tests[:1])]
    checked = sqlglot.parse_one(probe_query(probes), read="tsql")
    assert isinstance(checked, exp.Union)
    row_hash = row_hashes(DIALECT, plan).source_row
    compared = sqlglot.parse_one(rows_query(DIALECT, plan, table_ref, conditions, row_hash), read="tsql")
    assert isinstance(compared, exp.Union)
    assert any(t.name == "Order]s" for t in compared.find_all(exp.Table))
    totals_text = totals_query(DIALECT, table_ref, conditions, row_hash)
    totals = sqlglot.parse_one(totals_text, read="tsql")
    assert isinstance(totals, exp.Select)
    assert "sum(cast(row_hash as decimal(38, 0)))" in totals_text  # a sum of 64-bit hashes overflows a bigint
    assert len(list(totals.find_all(exp.Union))) == len(conditions) - 1
    if cursor_kind == "modify id":
        assert newer == ""  # no window: every row found is a change
    else:
        assert "[ModifiedDate] >= cast('2026-11-28T17:45:12.123456' as datetime2(7))" in newer
        assert "then 2 when" in probe_query(probes)
