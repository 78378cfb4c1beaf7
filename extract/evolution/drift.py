"""How a replica's columns and key differ from its table as planned now (the source's definition
through the type map): what a schema change in the source asks of the replica."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import psycopg
from psycopg import sql

from extract.config.naming import TargetNames
from extract.core.sql_contract import KEY_HASH_COLUMN, ROW_HASH_COLUMN
from extract.evolution.widening import Retyping, retyping
from extract.landing.staging import column_defs
from extract.planning.table_plan import TablePlan
from extract.source.dialects.postgres import PostgresDialect
from extract.source.typemap import MappedColumn

_TARGET = PostgresDialect()

_COLUMNS = """
select a.attname, format_type(a.atttypid, a.atttypmod)
from pg_attribute as a
where a.attrelid = to_regclass(%s) and a.attnum > 0 and not a.attisdropped and a.attgenerated = ''
order by a.attnum
"""

_KEY = """
select a.attname
from pg_index as i
cross join lateral unnest(i.indkey) with ordinality as k (attnum, position)
inner join pg_attribute as a on a.attrelid = i.indrelid and a.attnum = k.attnum
where i.indrelid = to_regclass(%s) and i.indisprimary
order by k.position
"""

#: The planned columns' types as Postgres spells them, from a table of that shape that never commits.
_SHAPE_TABLE = "tidemark_planned_shape"


@dataclass(frozen=True)
class Retyped:
    column: MappedColumn
    old_type: str
    new_type: str
    how: Retyping


@dataclass
class Drift:
    """What the replica lacks, holds over, or holds otherwise; empty when it matches."""

    added: list[MappedColumn] = field(default_factory=list)
    dropped: list[tuple[str, str]] = field(default_factory=list)  # (column, type)
    retyped: list[Retyped] = field(default_factory=list)
    key: tuple[list[str], list[str]] | None = None  # (the replica's, the source's)

    def __bool__(self) -> bool:
        return bool(self.added or self.dropped or self.retyped or self.key)

    def lines(self) -> list[str]:
        """Each change, for a person: 'column email added (character varying(100))'."""
        said = [f"column {c.target_name} added ({c.target_type})" for c in self.added]
        said += [f"column {name} dropped ({type_text})" for name, type_text in self.dropped]
        for r in self.retyped:
            how = "widened" if r.how.in_place else "changed"
            said.append(f"column {r.column.target_name} {how} ({r.old_type} -> {r.new_type})")
        if self.key is not None:
            said.append(f"primary key ({', '.join(self.key[0])}) -> ({', '.join(self.key[1])})")
        return said


def replica_ref(names: TargetNames) -> str:
    return _TARGET.table_ref(names.schema, names.table)


def replica_columns(conn: psycopg.Connection, names: TargetNames) -> list[tuple[str, str]] | None:
    """(name, type) of the replica's own columns (not its generated hashes); None when it does not exist."""
    rows = conn.execute(_COLUMNS, (replica_ref(names),)).fetchall()
    if not rows:
        return None
    return [(str(n), str(t)) for n, t in rows if n not in (KEY_HASH_COLUMN, ROW_HASH_COLUMN)]


def replica_key(conn: psycopg.Connection, names: TargetNames) -> list[str]:
    """The replica's primary key columns, in key order."""
    return [str(row[0]) for row in conn.execute(_KEY, (replica_ref(names),)).fetchall()]


def planned_types(conn: psycopg.Connection, columns: Sequence[MappedColumn]) -> dict[str, str]:
    """Each planned column's type as `format_type` spells it (`varchar(10)`: `character varying(10)`)."""
    with conn.transaction(force_rollback=True):
        conn.execute(
            sql.SQL("create temporary table {} ({})").format(
                sql.Identifier(_SHAPE_TABLE), sql.SQL(", ").join(column_defs(columns, False))
            )
        )
        rows = conn.execute(_COLUMNS, (_TARGET.quote(_SHAPE_TABLE),)).fetchall()
    return {str(n): str(t) for n, t in rows}


def drift(conn: psycopg.Connection, plan: TablePlan) -> Drift | None:
    """How the replica differs from `plan`; None when there is no replica yet."""
    found = replica_columns(conn, plan.names)
    if found is None:
        return None
    current = dict(found)
    planned = planned_types(conn, plan.columns)
    result = Drift()
    for column in plan.columns:
        old = current.get(column.target_name)
        new = planned[column.target_name]
        if old is None:
            result.added.append(column)
        elif old != new:
            result.retyped.append(Retyped(column, old, new, retyping(old, new)))
    result.dropped = [(name, t) for name, t in found if name not in planned]
    key = replica_key(conn, plan.names)
    if key and key != plan.key_columns:
        result.key = (key, plan.key_columns)
    return result
