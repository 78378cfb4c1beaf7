"""The replica's unique constraint on a table's record id (the seed's record_id)."""

from __future__ import annotations

import psycopg
from psycopg import sql

from extract.config.naming import TargetNames
from extract.core.errors import TidemarkError
from extract.state.run_log import DDL_LOCK

_HAS_UNIQUE = """
select exists (
    select 1 from pg_constraint as c
    join pg_attribute as a on a.attrelid = c.conrelid and a.attnum = any(c.conkey)
    where c.conrelid = %s::regclass and c.contype = 'u' and cardinality(c.conkey) = 1 and a.attname = %s
)
"""


def ensure_record_unique(conn: psycopg.Connection, names: TargetNames, record_column: str) -> bool:
    """Give the replica a unique constraint on its record id, DEFERRABLE INITIALLY DEFERRED: a merge
    that moves rows between keys holds two rows of one record only inside its transaction. Added once
    the replica holds rows, so that a first sync can still adopt its staging as the replica (which
    keeps no constraint but the primary key). Returns whether it was added now."""
    relation = sql.Identifier(names.schema, names.table)
    regclass = sql.Composed([relation]).as_string(conn)
    with conn.transaction():
        conn.execute(DDL_LOCK)
        row = conn.execute(_HAS_UNIQUE, (regclass, record_column)).fetchone()
        if row is not None and row[0]:
            return False
        if conn.execute(sql.SQL("select 1 from {} limit 1").format(relation)).fetchone() is None:
            return False
        duplicate = conn.execute(
            sql.SQL("select {0} from {1} where {0} is not null group by {0} having count(*) > 1 limit 1").format(
                sql.Identifier(record_column), relation
            )
        ).fetchone()
        if duplicate is not None:
            raise TidemarkError(
                f"{names.table_key}: record_id {record_column!r} is not unique in the replica "
                f"({duplicate[0]!r} is held by more than one row): it cannot identify a row"
            )
        conn.execute(
            sql.SQL("alter table {} add unique ({}) deferrable initially deferred").format(
                relation, sql.Identifier(record_column)
            )
        )
    return True
