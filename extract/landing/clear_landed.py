"""Dropping the landed rows no merge needs from a table's staging: of runs merged, failed or killed."""

from __future__ import annotations

from collections.abc import Sequence

import psycopg
from psycopg import sql

from extract.config.naming import TargetNames
from extract.core.sql_contract import PARTITION_COLUMN, RUN_ID_COLUMN
from extract.core.state_schema import StateSchema
from extract.landing.landed_first_sync import move_to_staging

_PENDING_RUNS = "select exists (select 1 from {pending_runs} where table_key = %s)"


def awaits_merge(state: StateSchema) -> sql.Composed:
    """True for a landed row (`s`) whose run landed and waits for a merge."""
    return state.sql("s.{run_id} in (select run_id from {pending_runs})", run_id=sql.Identifier(RUN_ID_COLUMN))


def clear_staging(
    conn: psycopg.Connection, state: StateSchema, names: TargetNames, keep: tuple[int, Sequence[int]] = (0, ())
) -> None:
    """Drop the staging rows no merge needs: of runs already merged, and of runs that never landed
    (failed or killed), except the landed partitions `keep[1]` of run `keep[0]`, which is resumed.

    The caller holds the table's extract lock, so no other run lands rows meanwhile. Merges
    leave their rows for this, so that a merge never pays for a large delete. The rows of a landed
    first sync not merged yet join staging first, as the next run lands beside them.
    """
    move_to_staging(conn, state, names)
    row = conn.execute(state.sql(_PENDING_RUNS), (names.table_key,)).fetchone()
    clear_landed_rows(conn, (names.schema, names.staging_table), bool(row and row[0]), awaits_merge(state), keep)


def clear_landed_rows(
    conn: psycopg.Connection,
    table: tuple[str, str],
    any_waits: bool,
    waits: sql.Composable,
    keep: tuple[int, Sequence[int]],
) -> None:
    """Delete the rows of landing table `table` (schema, name) for which the condition `waits` (SQL
    on row `s`, no values) is false, except partitions `keep[1]` of run `keep[0]`; when no run
    waits (`any_waits`) and none is resumed, TRUNCATE does it at once."""
    relation = sql.Identifier(*table)
    if not any_waits and not keep[1]:
        # TRUNCATE makes new files for the table and its indexes even when it is empty, as it mostly is
        empty = conn.execute(sql.SQL("select not exists (select from {})").format(relation)).fetchone()
        if not (empty and empty[0]):
            conn.execute(sql.SQL("truncate {}").format(relation))
        conn.commit()
        return
    if not keep[1]:  # a table without partitions (tombstones) has no partition column to test
        conn.execute(sql.SQL("delete from {} as s where not {}").format(relation, waits))
        conn.commit()
        return
    conn.execute(
        sql.SQL("delete from {} as s where not {} and not (s.{} = %s and s.{} = any(%s))").format(
            relation, waits, sql.Identifier(RUN_ID_COLUMN), sql.Identifier(PARTITION_COLUMN)
        ),
        (keep[0], list(keep[1])),
    )
    conn.commit()
