"""Keyset pages over a source table, in (cursor, key) order or key order.

A page is the half-open range (start, end] of positions. Its end is found first by a
small query that reads only the ordering columns, with the start bound as ?
parameters; the rows of the page are then read by Spark with both ends as typed
literals of the source's own text for them, so a position round-trips exactly, whatever
the precision of the column. Keys are unique, so a tie on the cursor can never make a
row fall between two pages or into both.
"""

from __future__ import annotations

from collections.abc import Sequence

from extract.catalog import SourceColumn
from extract.dialects.base import Dialect


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


def start_parameters(start: Sequence[str]) -> list[str]:
    """The ? values of page_end_query's start bound, in the order `after` uses them (all but the last twice)."""
    return [value for value in start[:-1] for _ in (0, 1)] + list(start[-1:])


def _where(parts: Sequence[str]) -> str:
    kept = [p for p in parts if p]
    return (" where " + " and ".join(kept)) if kept else ""


def page_end_query(
    dialect: Dialect,
    table_ref: str,
    order: Sequence[SourceColumn],
    base: str,
    has_start: bool,
    rows: int,
) -> str:
    """The position of the last row of the next page, as the source's text; start bound as ? parameters."""
    start = after(dialect, order, [dialect.position_parameter(c) for c in order]) if has_start else ""
    names = ", ".join(dialect.quote(c.name) for c in order)
    inner = dialect.limited(f"{names} from {table_ref}{_where([base, start])} order by {names}", rows)
    # Qualified, so ORDER BY sorts the typed columns, not the text outputs of the same names.
    descending = ", ".join(f"page.{dialect.quote(c.name)} desc" for c in order)
    texts = ", ".join(f"{dialect.position_text(c, 'page.')} as position_{i}" for i, c in enumerate(order, start=1))
    return dialect.limited(f"{texts} from ({inner}) as page order by {descending}", 1)


def page_rows_query(table_ref: str, select_list: str, where: str) -> str:
    return f"select {select_list} from {table_ref} where {where}"


def page_rows_filter(
    dialect: Dialect,
    order: Sequence[SourceColumn],
    base: str,
    start: Sequence[str] | None,
    end: Sequence[str],
) -> str:
    """The WHERE condition of one page's rows: base, after start, up to and including end."""
    literal = [dialect.position_literal(text, column) for text, column in zip(end, order, strict=True)]
    parts = [base, at_most(dialect, order, literal)]
    if start is not None:
        begin = [dialect.position_literal(text, column) for text, column in zip(start, order, strict=True)]
        parts.insert(1, after(dialect, order, begin))
    return " and ".join(p for p in parts if p)
