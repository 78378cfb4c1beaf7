"""Boundary cleanup, before any comparison: replica rows whose key lies outside the source's key range
can match no source row, so they are tombstoned at once and left out of the bisection.

Only for a first key column of whole numbers or dates, which every database orders alike; text
and uuid keys sort by collation or byte layout, and the bisection finds their strays instead.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import psycopg
from psycopg import sql

from extract.core.quoting import sql_string
from extract.core.sql_contract import RUN_ID_COLUMN
from extract.lifecycle.context import RunContext
from extract.planning.table_plan import TablePlan
from extract.project.verify import kind_of
from extract.source.dialects.postgres import PostgresDialect
from extract.source.typemap import MappedColumn

_ORDERED_ALIKE = frozenset({"int", "date"})
_TARGET = PostgresDialect()


@dataclass(frozen=True)
class KeyBounds:
    low: str | None  # None: the source table is empty
    high: str | None
    #: SQL on the replica's columns: true inside the bounds ("" when there is nothing to clean).
    inside: str
    #: The key is a whole number (else a date).
    whole_numbers: bool
    #: SQL on the replica's columns: true outside the bounds. Two ranges of the key's index, where the
    #: negation of `inside` would read every row.
    outside: str = "true"

    @property
    def source_empty(self) -> bool:
        return self.low is None


def key_bounds(context: RunContext, plan: TablePlan) -> KeyBounds | None:
    """The source's [min, max] of the first key column, or None when its type orders differently
    in the two databases."""
    first = plan.source_keys[0]
    mapped, kind = _first_key(plan)
    if kind not in _ORDERED_ALIKE:
        return None
    dialect = context.dialect
    low, high = replace(first, name="tidemark_low"), replace(first, name="tidemark_high")
    quoted = dialect.quote(first.name)
    table = context.table_ref(plan.table)
    row = context.source.query(
        f"select {dialect.position_text(low, 'b.')}, {dialect.position_text(high, 'b.')} from ("
        f"select min({quoted}) as tidemark_low, max({quoted}) as tidemark_high from {table}) as b"
    )[0]
    if row[0] is None or row[1] is None:
        return KeyBounds(None, None, "", kind == "int")
    return _bounds(mapped, kind, row[0], row[1])


def replica_key_bounds(conn: psycopg.Connection, plan: TablePlan) -> KeyBounds | None:
    """The replica's [min, max] of a whole-number first key column, as key_bounds gives the source's
    (the same after a first sync); None for any other key, or an empty replica."""
    mapped, kind = _first_key(plan)
    if kind != "int":
        return None
    column = _TARGET.quote(mapped.target_name)
    row = conn.execute(
        f"select cast(min({column}) as text), cast(max({column}) as text)"
        f" from {_TARGET.table_ref(plan.names.schema, plan.names.table)}"
    ).fetchone()
    conn.commit()
    if row is None or row[0] is None or row[1] is None:
        return None
    return _bounds(mapped, kind, str(row[0]), str(row[1]))


def _first_key(plan: TablePlan) -> tuple[MappedColumn, str]:
    """The first key column, and the kind of its values (extract/project/verify.py)."""
    mapped = next(c for c in plan.columns if c.source.name == plan.source_keys[0].name)
    return mapped, kind_of(mapped.target_type)[0]


def _bounds(mapped: MappedColumn, kind: str, low: str, high: str) -> KeyBounds:
    column = _TARGET.quote(mapped.target_name)
    literal = "cast({} as " + mapped.target_type + ")"  # a type from the type map, checked by the target
    low_value, high_value = literal.format(sql_string(low)), literal.format(sql_string(high))
    inside = f"{column} between {low_value} and {high_value}"
    # A key column is never NULL: outside the bounds is below the lowest or above the highest.
    outside = f"{column} < {low_value} or {column} > {high_value}"
    return KeyBounds(low, high, inside, kind == "int", outside)


def count_outside(conn: psycopg.Connection, plan: TablePlan, bounds: KeyBounds) -> int:
    """Replica rows outside the bounds (all of them when the source is empty)."""
    query = f"select count(*) from {_TARGET.table_ref(plan.names.schema, plan.names.table)} where {bounds.outside}"
    row = conn.execute(query).fetchone()
    conn.commit()
    return 0 if row is None else int(row[0])


def tombstone_outside(conn: psycopg.Connection, plan: TablePlan, bounds: KeyBounds, run_id: int) -> int:
    """Land every replica row outside the bounds as a tombstone of run `run_id`; returns how many."""
    keys = sql.SQL(", ").join(sql.Identifier(k) for k in plan.key_columns)
    outside = sql.SQL(bounds.outside)
    statement = sql.SQL("insert into {} ({}, {}) select {}, %s from {} where {}").format(
        sql.Identifier(plan.names.schema, plan.names.tombstone_table),
        keys,
        sql.Identifier(RUN_ID_COLUMN),
        keys,
        sql.Identifier(plan.names.schema, plan.names.table),
        outside,
    )
    with conn.transaction():
        return conn.execute(statement, (run_id,)).rowcount
