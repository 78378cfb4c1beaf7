"""A first sync writes each row once. It lands in a logged table of its own, which the merge then
makes the replica itself (macros/first_sync/tidemark_adopt_first_sync_sql.sql) instead of copying
its rows into the replica. Whether a run is a first sync is decided here, when it starts to land, and
recorded on that table when it has landed (extract/landing/landed_first_sync.py): the merge reads the
record."""

from __future__ import annotations

from collections.abc import Sequence

import psycopg
from psycopg import sql

from extract.config.naming import TargetNames
from extract.landing.landed_first_sync import landed_run, record_landed
from extract.landing.staging import column_defs
from extract.source.typemap import MappedColumn


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
    yet, is dropped first. A logged staging table (as first syncs once left it) is made unlogged
    again once it is empty. Call after clear_staging (which moves a landed first sync's rows
    into staging), under the extract lock.
    """
    first = sql.Identifier(names.schema, names.first_sync_table)
    staging = sql.Identifier(names.schema, names.staging_table)
    first_exists = _persistence(conn, names.schema, names.first_sync_table) is not None
    conn.commit()  # what follows commits on its own, for the landing's connections to see it
    if resumed_partitions and first_exists:
        return True
    with conn.transaction():
        if first_exists:
            _drop_unless_landed(conn, names)
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


def _drop_unless_landed(conn: psycopg.Connection, names: TargetNames) -> None:
    """Drop the first-sync table, unless its run landed: then its rows wait for their merge."""
    if landed_run(conn, names) is None:
        conn.execute(sql.SQL("drop table if exists {}").format(sql.Identifier(names.schema, names.first_sync_table)))


def drop_first_sync_table(conn: psycopg.Connection, names: TargetNames) -> None:
    """Drop the first-sync table of a run that failed: a failed run is not resumed."""
    _drop_unless_landed(conn, names)
    conn.commit()


def promote(conn: psycopg.Connection, names: TargetNames, columns: Sequence[MappedColumn], run_id: int) -> None:
    """Record that the first-sync table holds the rows of run `run_id`, in the caller's transaction,
    which marks the run landed under the merge lock. The table stays as it landed: the merge makes it
    the replica, or copies its rows into the replica; a run landing before that merge moves them into
    staging. (`columns`, the table's, are not needed: nothing is added to it.)"""
    record_landed(conn, names, run_id)
