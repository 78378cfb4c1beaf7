"""A replica's changed keys: the keys its merges inserted, updated, deleted or moved since its dbt snapshot
(SCD2 history) last ran, so that the snapshot compares those rows and no other
(dbt_package/macros/history/). A change no key records asks the next snapshot to compare every row: a
row in the state schema's history_rescans."""

from __future__ import annotations

from collections.abc import Sequence

import psycopg
from psycopg import sql

from extract.config.naming import TargetNames
from extract.core.state_schema import StateSchema
from extract.landing.staging import column_defs
from extract.source.typemap import MappedColumn
from extract.state.run_log import DDL_LOCK

_RESCAN = "insert into {history_rescans} (table_key, reason) values (%s, %s)"


def mark_rescan(conn: psycopg.Connection, state: StateSchema, names: TargetNames, reason: str) -> None:
    """The replica's next snapshot compares every row; in the caller's transaction (under the merge lock,
    as the snapshot reads these rows under it)."""
    conn.execute(state.sql(_RESCAN), (names.table_key, reason))


def ensure_changed_keys(
    conn: psycopg.Connection,
    state: StateSchema,
    names: TargetNames,
    columns: Sequence[MappedColumn],
    key: Sequence[str],
    reason: str = "merges before its changed keys were recorded",
) -> None:
    """The replica's changed-keys table: its key columns, typed as in the replica. Created with a rescan
    (for `reason`): merges made before it recorded no key."""
    table = sql.Identifier(names.schema, names.changed_keys_table)
    with conn.transaction():
        conn.execute(DDL_LOCK)  # tables synced at once share a schema
        found = conn.execute("select to_regclass(%s)", (table.as_string(conn),)).fetchone()
        if found is not None and found[0] is not None:
            return
        keys = [k.lower() for k in key]
        key_columns = sorted((c for c in columns if c.target_name in keys), key=lambda c: keys.index(c.target_name))
        defs = column_defs(key_columns, with_not_null=False)
        conn.execute(
            sql.SQL("create table {} ({}, primary key ({}))").format(
                table, sql.SQL(", ").join(defs), sql.SQL(", ").join(map(sql.Identifier, keys))
            )
        )
        mark_rescan(conn, state, names, reason)
