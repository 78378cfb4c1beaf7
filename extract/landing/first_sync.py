"""A first sync writes each row once. It lands in a logged table of its own, which becomes the
staging table when every partition has landed; the merge then makes that table the replica
itself (macros/first_sync/tidemark_adopt_staging_sql.sql) instead of copying its rows into the replica."""

from __future__ import annotations

from collections.abc import Sequence

import psycopg
from psycopg import errors, sql

from extract.config.naming import TargetNames
from extract.core.errors import TidemarkError
from extract.core.quoting import ParameterSafeIdentifier
from extract.core.sql_contract import PARTITION_COLUMN, RUN_ID_COLUMN
from extract.landing.staging import column_defs
from extract.source.typemap import MappedColumn

#: The run id reaches the promoted table's column default through this session setting: DDL takes
#: no parameters, and a value is never formatted into SQL. Its read, current_setting(), is stable, so
#: the default is evaluated once.
_ADD_RUN_COLUMNS = (
    "alter table {} add column {} bigint not null default current_setting('tidemark.run_id')::bigint,"
    " add column {} integer not null default 0"
)


def _persistence(conn: psycopg.Connection, schema: str, name: str) -> str | None:
    """'p' for a logged table, 'u' for an unlogged one, None when there is no such table."""
    row = conn.execute(
        "select c.relpersistence from pg_class as c where c.oid = to_regclass(format('%%I.%%I', %s::text, %s::text))",
        (schema, name),
    ).fetchone()
    return None if row is None else str(row[0])


def _has_rows(conn: psycopg.Connection, table: sql.Identifier) -> bool:
    row = conn.execute(sql.SQL("select exists (select 1 from {})").format(table)).fetchone()
    return bool(row and row[0])


def prepare_landing(
    conn: psycopg.Connection,
    names: TargetNames,
    columns: Sequence[MappedColumn],
    *,
    full_run: bool,
    resumed_partitions: bool,
    replace: bool = False,
) -> bool:
    """Whether the run lands in the first-sync table (created here) rather than in staging.

    A full run does when the replica and staging are both empty, or when it is to `replace` the
    replica (extract/evolution/full_refresh.py); a resumed run goes on in the
    table it landed in before. The table of a run that is not resumed, or that landed nothing
    yet, is dropped first. Staging, made logged by a first sync whose merge did not adopt it,
    is made unlogged again once it is empty. Call after clear_staging, under the extract lock.
    """
    first = sql.Identifier(names.schema, names.first_sync_table)
    staging = sql.Identifier(names.schema, names.staging_table)
    first_exists = _persistence(conn, names.schema, names.first_sync_table) is not None
    conn.commit()  # what follows commits on its own, for the landing's connections to see it
    if resumed_partitions and first_exists:
        return True
    with conn.transaction():
        if first_exists:
            conn.execute(sql.SQL("drop table {}").format(first))
        staging_empty = not _has_rows(conn, staging)
        if replace or (full_run and staging_empty and not _has_rows(conn, sql.Identifier(names.schema, names.table))):
            # Unlike staging, logged: these rows become the replica's. No vacuum while they land.
            conn.execute(
                sql.SQL("create table {} ({}) with (autovacuum_enabled = false)").format(
                    first, sql.SQL(", ").join(column_defs(columns, False))
                )
            )
            return True
        if staging_empty and _persistence(conn, names.schema, names.staging_table) == "p":
            conn.execute(sql.SQL("alter table {} set unlogged").format(staging))
    return False


def drop_first_sync_table(conn: psycopg.Connection, names: TargetNames) -> None:
    """Drop the first-sync table of a run that failed: a failed run is not resumed."""
    conn.execute(sql.SQL("drop table if exists {}").format(sql.Identifier(names.schema, names.first_sync_table)))
    conn.commit()


def promote(conn: psycopg.Connection, names: TargetNames, columns: Sequence[MappedColumn], run_id: int) -> None:
    """Make the first-sync table the staging table, in the caller's transaction, which marks the run
    landed under the merge lock.

    Its rows carry no run id or partition: the two columns are added with defaults, which
    PostgreSQL stores once as the value of every row already there, so no row is rewritten. If
    something still reads staging (a view, or a dbt session's batch view), the rows are copied
    into staging instead.
    """
    staging = sql.Identifier(names.schema, names.staging_table)
    first = sql.Identifier(names.schema, names.first_sync_table)
    if _has_rows(conn, staging):
        raise TidemarkError(
            f"{names.schema}.{names.staging_table} holds rows, but run {run_id} landed as a first sync in "
            f"{names.schema}.{names.first_sync_table}: run the extract again"
        )
    try:
        with conn.transaction():
            conn.execute(sql.SQL("drop table {}").format(staging))
    except errors.DependentObjectsStillExist:
        names_list = sql.SQL(", ").join(ParameterSafeIdentifier(c.target_name) for c in columns)
        conn.execute(
            sql.SQL("insert into {} ({}, {}, {}) select {}, %s, 0 from {}").format(
                staging, names_list, sql.Identifier(RUN_ID_COLUMN), sql.Identifier(PARTITION_COLUMN), names_list, first
            ),
            (run_id,),
        )
        conn.execute(sql.SQL("drop table {}").format(first))
        return
    conn.execute(sql.SQL("alter table {} rename to {}").format(first, sql.Identifier(names.staging_table)))
    conn.execute("select set_config('tidemark.run_id', %s, true)", (str(run_id),))
    conn.execute(
        sql.SQL(_ADD_RUN_COLUMNS).format(staging, sql.Identifier(RUN_ID_COLUMN), sql.Identifier(PARTITION_COLUMN))
    )
    conn.execute(sql.SQL("alter table {} alter column {} drop default").format(staging, sql.Identifier(RUN_ID_COLUMN)))
