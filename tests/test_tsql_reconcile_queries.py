"""Every query a reconcile sends to SQL Server parses as T-SQL (sqlglot): a level's figures, the pairs
of its leaves, for a table of every key kind, with a clock or a modify-id cursor."""

from __future__ import annotations

from datetime import datetime

import pytest
import sqlglot
from sqlglot import exp

from extract.planning.table_plan import TablePlan
from extract.reconcile.boundary import KeyBounds
from extract.reconcile.hashes import row_hashes
from extract.reconcile.queries import HashedRelation, level_query, pairs_query
from extract.reconcile.tree import HashSpace, Level, Node
from tests.tsql_plans import CURSORS, DIALECT, KEYS, plan_of


def _source_side(plan: TablePlan, recent: str, bounds: KeyBounds | None = None) -> HashedRelation:
    hashes = row_hashes(DIALECT, plan, bounds)
    return HashedRelation(
        dialect=DIALECT,
        relation=DIALECT.table_ref(plan.table.schema, plan.table.name),
        key_hash=hashes.source_key,
        row_hash=hashes.source_row,
        key_text=hashes.source_key_text,
        null_key="0",
        extra=(f"case when {recent} then 'recent' else 'old' end",),
        where=hashes.source_within,
        ordered_key=hashes.source_ordered_key,
        origin=hashes.origin,
    )


@pytest.mark.parametrize("cursor_kind", list(CURSORS))
@pytest.mark.parametrize("key_kind", list(KEYS))
def test_reconcile_queries_parse_as_tsql(key_kind: str, cursor_kind: str) -> None:
    cursor = CURSORS[cursor_kind]
    plan = plan_of(KEYS[key_kind], cursor)
    bound: datetime | int = datetime(2026, 11, 1, 12, 30) if cursor_kind == "clock" else 2001
    recent = f"{DIALECT.quote(cursor.source.name)} >= {DIALECT.cursor_literal(bound, cursor.source)}"
    side = _source_side(plan, recent)
    space = HashSpace(32)
    queries = [
        level_query(side, space, Level(2, None)),
        level_query(side, space, Level(3, [5, 17, 900]), "[Id] >= 10"),
        pairs_query(side, space, [Node(3, 7), Node(4, 250)]),
    ]
    for query in queries:
        tree = sqlglot.parse_one(query, read="tsql")
        assert isinstance(tree, exp.Select)
        assert any(t.name == "Order]s" for t in tree.find_all(exp.Table))
    assert "hashbytes('MD5'" in queries[0] and "string_split('5,17,900', ',')" in queries[1]
    if cursor_kind == "modify id":
        # (key, modify id) stands for the row: the row hash reads the modify id, no other column.
        assert "[RowVer]" in side.row_hash and "[Amount]" not in side.row_hash
        assert "[RowVer] >= 0x00000000000007D1" in queries[2]
    else:
        assert "[Amount]" in side.row_hash


def test_a_whole_number_key_is_placed_by_its_offset_in_tsql() -> None:
    """A key of one whole-number column is placed at its offset from the source's lowest key, in bigint
    arithmetic (no md5 of the key), and the source's rows are limited to the range compared."""
    plan = plan_of(KEYS["int"], CURSORS["clock"])
    bounds = KeyBounds("-2147483648", "2147483647", "", True)
    side = _source_side(plan, "1 = 1", bounds)
    space = HashSpace.of(32, row_hashes(DIALECT, plan, bounds).key_bits)
    assert space.bits == 35 and space.divisor(1) == 1 << 30
    queries = [level_query(side, space, Level(1, None)), pairs_query(side, space, [Node(2, 7)])]
    for query in queries:
        assert isinstance(sqlglot.parse_one(query, read="tsql"), exp.Select)
        assert "(cast([Id] as bigint) - cast(-2147483648 as bigint))" in query
        assert "[Id] between cast(-2147483648 as bigint) and cast(2147483647 as bigint)" in query
    assert "hashbytes('MD5'" not in side.key_hash
    # A dense start's first slice: every range under its parents, by their slice of the key alone.
    whole = level_query(side, space, Level(2, [0, 1, 2], whole=True))
    assert isinstance(sqlglot.parse_one(whole, read="tsql"), exp.Select)
    assert "([Id] between cast(-2147483648 as bigint) and cast(1073741823 as bigint))" in whole
    assert "string_split" not in whole and "% 32 <> 31" not in whole
