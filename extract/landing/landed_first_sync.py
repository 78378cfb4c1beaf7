"""The record that a first sync's own table holds a landed run: the one place the merge learns that a
run was a first sync (macros/first_sync/tidemark_landed_first_sync.sql reads it).

The record is the table's comment, FIRST_SYNC_RECORD and the run id, set in the transaction that marks
the run landed: it goes with the table, so it cannot outlive or miss the rows it speaks of. Until then
the table belongs to the run still landing in it (or to a killed run, which resumes in it).
"""

from __future__ import annotations

import psycopg
from psycopg import sql

from extract.config.naming import TargetNames
from extract.core.quoting import ParameterSafeIdentifier
from extract.core.sql_contract import FIRST_SYNC_RECORD, PARTITION_COLUMN, RUN_ID_COLUMN
from extract.core.state_schema import StateSchema
from extract.state.run_log import merge_lock_sql

_RECORD = "select obj_description(to_regclass(format('%%I.%%I', %s::text, %s::text)), 'pg_class')"
_PENDING = "select exists (select 1 from {pending_runs} where table_key = %s and run_id = %s)"
_COLUMNS = (
    "select a.attname from pg_attribute as a"
    " where a.attrelid = to_regclass(format('%%I.%%I', %s::text, %s::text)) and a.attnum > 0 and not a.attisdropped"
    " order by a.attnum"
)


def record_landed(conn: psycopg.Connection, names: TargetNames, run_id: int) -> None:
    """Record, in the caller's transaction, that the first-sync table holds the rows of run `run_id`."""
    conn.execute(
        sql.SQL("comment on table {} is {}").format(
            sql.Identifier(names.schema, names.first_sync_table), sql.Literal(f"{FIRST_SYNC_RECORD}{int(run_id)}")
        )
    )


def landed_run(conn: psycopg.Connection, names: TargetNames) -> int | None:
    """The landed run whose rows the first-sync table holds, or None (no such table, or no run landed in it)."""
    row = conn.execute(_RECORD, (names.schema, names.first_sync_table)).fetchone()
    record = None if row is None else row[0]
    if not isinstance(record, str) or not record.startswith(FIRST_SYNC_RECORD):
        return None
    return int(record.removeprefix(FIRST_SYNC_RECORD))


def move_to_staging(conn: psycopg.Connection, state: StateSchema, names: TargetNames) -> None:
    """Before another run lands: the rows of a landed first sync that no merge took yet join staging
    as that run's, and its table goes, so that the merge finds every pending run's rows in staging.

    Under the merge lock, so that no merge takes the table meanwhile. Rare: it takes a second run of
    a table between its first sync and that sync's merge.
    """
    found = landed_run(conn, names)
    conn.commit()
    if found is None:
        return
    with conn.transaction():
        conn.execute(*merge_lock_sql(state, names.table_key))
        run_id = landed_run(conn, names)
        if run_id is None:
            return  # a merge took it meanwhile
        pending = conn.execute(state.sql(_PENDING), (names.table_key, run_id)).fetchone()
        if pending is not None and pending[0]:
            _copy_to_staging(conn, names, run_id)
        conn.execute(sql.SQL("drop table {}").format(sql.Identifier(names.schema, names.first_sync_table)))


def _copy_to_staging(conn: psycopg.Connection, names: TargetNames, run_id: int) -> None:
    found = conn.execute(_COLUMNS, (names.schema, names.first_sync_table)).fetchall()
    columns = sql.SQL(", ").join(ParameterSafeIdentifier(str(row[0])) for row in found)
    conn.execute(
        sql.SQL("insert into {} ({}, {}, {}) select {}, %s, 0 from {}").format(
            ParameterSafeIdentifier(names.schema, names.staging_table),
            columns,
            ParameterSafeIdentifier(RUN_ID_COLUMN),
            ParameterSafeIdentifier(PARTITION_COLUMN),
            columns,
            ParameterSafeIdentifier(names.schema, names.first_sync_table),
        ),
        (run_id,),
    )
