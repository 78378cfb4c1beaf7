"""The replica's unique constraints besides its key: the record id's and the seed's unique_keys."""

from __future__ import annotations

import psycopg
from psycopg import sql

from extract.config.naming import TargetNames
from extract.core.errors import TidemarkError
from extract.landing.replica_locks import with_lock_timeout
from extract.state.run_log import DDL_LOCK

_HAS_UNIQUE = """
select exists (
    select 1 from pg_constraint as c
    where c.conrelid = to_regclass(%s) and c.contype = 'u' and (
        select array_agg(a.attname::text order by a.attname::text) from pg_attribute as a
        where a.attrelid = c.conrelid and a.attnum = any(c.conkey)
    ) = %s::text[]
)
"""


def has_unique(conn: psycopg.Connection, names: TargetNames, columns: list[str]) -> bool:
    """Whether the replica (if it exists) carries a unique constraint on exactly `columns`."""
    regclass = sql.Composed([sql.Identifier(names.schema, names.table)]).as_string(conn)
    row = conn.execute(_HAS_UNIQUE, (regclass, sorted(columns))).fetchone()
    return row is not None and bool(row[0])


def ensure_unique(conn: psycopg.Connection, names: TargetNames, columns: list[str], label: str) -> bool:
    """Give the replica a unique constraint on `columns`, DEFERRABLE INITIALLY DEFERRED: a merge that
    moves rows between keys, or values between rows, holds two rows of one value only inside its
    transaction. Added once the replica holds rows, so that a first sync can still adopt its staging
    as the replica (which keeps no constraint but the primary key). `label` names the seed's setting
    in an error. Returns whether it was added now."""
    relation = sql.Identifier(names.schema, names.table)
    regclass = sql.Composed([relation]).as_string(conn)

    def add() -> bool:
        if has_unique(conn, names, columns):
            return False
        if conn.execute(sql.SQL("select 1 from {} limit 1").format(relation)).fetchone() is None:
            return False
        listed = sql.SQL(", ").join(map(sql.Identifier, columns))
        present = sql.SQL(" and ").join(sql.SQL("{} is not null").format(sql.Identifier(c)) for c in columns)
        duplicate = conn.execute(
            sql.SQL("select {0} from {1} where {2} group by {0} having count(*) > 1 limit 1").format(
                listed, relation, present
            )
        ).fetchone()
        if duplicate is not None:
            value = duplicate[0] if len(columns) == 1 else tuple(duplicate)
            raise TidemarkError(
                f"{names.table_key}: {label} is not unique in the replica ({value!r} is held by more than "
                "one row): the replica cannot carry it"
            )
        conn.execute(sql.SQL("alter table {} add unique ({}) deferrable initially deferred").format(relation, listed))
        return True

    return with_lock_timeout(conn, [regclass], add, first=lambda: conn.execute(DDL_LOCK))
