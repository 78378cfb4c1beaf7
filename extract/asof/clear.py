"""Dropping the landed rows of snapshots that no as-of history needs any more."""

from __future__ import annotations

import psycopg
from psycopg import sql

from extract.config.naming import TargetNames
from extract.core.sql_contract import RUN_ID_COLUMN
from extract.core.state_schema import StateSchema
from extract.landing.clear_landed import clear_landed_rows

_AWAITING = """
select exists (
    select 1 from {snapshot_log}
    where table_key = %s and status = 'landed' and applied_at is null
)
"""

#: True for a landed snapshot row whose run waits to be applied.
_AWAITS_APPLY = (
    "exists (select 1 from {snapshot_log} as l"
    " where l.run_id = s.{run_id} and l.status = 'landed' and l.applied_at is null)"
)


def clear_snapshots(
    conn: psycopg.Connection, state: StateSchema, names: TargetNames, keep: tuple[int, list[int]] = (0, [])
) -> None:
    """Drop the landed rows no history needs: of applied and failed runs, and of killed runs,
    except the landed partitions `keep[1]` of run `keep[0]`, which is resumed."""
    row = conn.execute(state.sql(_AWAITING), (names.table_key,)).fetchone()
    waits = state.sql(_AWAITS_APPLY, run_id=sql.Identifier(RUN_ID_COLUMN))
    clear_landed_rows(conn, (names.schema, names.snapshot_table), bool(row and row[0]), waits, keep)
