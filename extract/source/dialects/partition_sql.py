"""Key-range partitions over a source table, in (cursor, key) order or key order.

A partition is the half-open range (start, end] of positions. The ends of all
partitions come from one query that numbers the rows in order and keeps every n-th
position, as the source's own text; Spark then reads each partition with both ends
as typed literals of that text, so a position round-trips exactly, whatever the
precision of the column. Keys are unique, so a tie on the cursor can never make a
row fall between two partitions or into both.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from extract.source.catalog import SourceColumn
from extract.source.dialects.base import Dialect


def _lexicographic(dialect: Dialect, columns: Sequence[SourceColumn], values: Sequence[str], last_op: str) -> str:
    """(c1 > v1) or (c1 = v1 and (... (cn <last_op> vn))) for strict ops in between."""
    strict = ">" if last_op in {">", ">="} else "<"
    quoted = [dialect.quote(c.name) for c in columns]
    expression = f"{quoted[-1]} {last_op} {values[-1]}"
    for name, value in zip(reversed(quoted[:-1]), reversed(values[:-1]), strict=True):
        expression = f"{name} {strict} {value} or ({name} = {value} and ({expression}))"
    return f"({expression})"


def after(dialect: Dialect, columns: Sequence[SourceColumn], values: Sequence[str]) -> str:
    return _lexicographic(dialect, columns, values, ">")


def at_most(dialect: Dialect, columns: Sequence[SourceColumn], values: Sequence[str]) -> str:
    return _lexicographic(dialect, columns, values, "<=")


def _where(parts: Sequence[str]) -> str:
    kept = [p for p in parts if p]
    return (" where " + " and ".join(kept)) if kept else ""


def count_query(dialect: Dialect, table_ref: str, base: str) -> str:
    """The number of rows a segment holds (its filter applied)."""
    return f"select {dialect.count_expression()} from {table_ref}{_where([base])}"


def boundary_query(dialect: Dialect, table_ref: str, order: Sequence[SourceColumn], base: str) -> str:
    """The position of every ?-th row of a segment in `order`, as the source's text: partition ends.

    One scan and one sort, whatever the number of partitions; the step is a ? parameter.
    """
    names = ", ".join(dialect.quote(c.name) for c in order)
    texts = ", ".join(f"{dialect.position_text(c, 'ranked.')} as position_{i}" for i, c in enumerate(order, start=1))
    ranked = f"select {names}, row_number() over (order by {names}) as tidemark_row from {table_ref}{_where([base])}"
    return (
        f"select {texts} from ({ranked}) as ranked"
        " where ranked.tidemark_row % cast(? as bigint) = 0 order by ranked.tidemark_row"
    )


#: A segment's query repeats its order columns under these names, as the source holds them, for
#: the partition filters: the select list may read a column as text, which sorts differently.
ORDER_ALIAS = "tidemark_order_{}"


def order_aliases(order: Sequence[SourceColumn]) -> tuple[SourceColumn, ...]:
    return tuple(replace(c, name=ORDER_ALIAS.format(i)) for i, c in enumerate(order, start=1))


def segment_query(dialect: Dialect, table_ref: str, select_list: str, order: Sequence[SourceColumn], base: str) -> str:
    """The rows of a segment: the select list, then the order columns under their aliases.

    Spark reads it as one relation, one partition per filter on the aliases (`range_filter`):
    ``select <columns> from (<this>) as tidemark_segment where (<filter>)``.
    """
    raw = ", ".join(
        f"{dialect.quote(c.name)} as {dialect.quote(a.name)}" for c, a in zip(order, order_aliases(order), strict=True)
    )
    return f"select {select_list}, {raw} from {table_ref}{_where([base])}"


def range_filter(
    dialect: Dialect,
    order: Sequence[SourceColumn],
    base: str,
    start: Sequence[str] | None,
    end: Sequence[str] | None,
) -> str:
    """The WHERE condition of one partition's rows: base, after start, up to and including end.

    A missing start or end leaves that side open; "1 = 1" when nothing filters.
    """
    parts = [base]
    if start is not None:
        begin = [dialect.position_literal(text, column) for text, column in zip(start, order, strict=True)]
        parts.append(after(dialect, order, begin))
    if end is not None:
        literal = [dialect.position_literal(text, column) for text, column in zip(end, order, strict=True)]
        parts.append(at_most(dialect, order, literal))
    return " and ".join(p for p in parts if p) or "1 = 1"
