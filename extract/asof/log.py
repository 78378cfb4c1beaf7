"""Snapshots landed for an as-of history, in _migration.snapshot_log: one row per snapshot run.

The extract writes a run as 'running', then 'landed' or 'failed'; the history model
sets applied_at in the transaction that applies it. Landed rows of a snapshot stay
in its landing table until it is applied; the next snapshot extract clears them.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime

import psycopg

from extract.config.naming import TargetNames
from extract.landing.staging import clear_landed_rows

#: Where a snapshot came from when it was read from the source table itself.
FROM_SOURCE = "source"


@dataclass
class SnapshotRecord:
    run_id: int
    table_key: str
    target_schema: str
    target_table: str
    as_of: date
    origin: str
    started_at: datetime
    status: str = "running"
    rows_landed: int = 0
    rows_planned: int | None = None
    partitions_planned: int | None = None
    partitions_landed: int = 0
    error_message: str | None = None


def begin(conn: psycopg.Connection, record: SnapshotRecord) -> None:
    with conn.transaction():
        conn.execute(
            "insert into _migration.snapshot_log (run_id, table_key, as_of, origin, status, rows_landed, started_at)"
            " values (%s, %s, %s, %s, 'running', 0, %s)",
            (record.run_id, record.table_key, record.as_of, record.origin, record.started_at),
        )


def finish(conn: psycopg.Connection, record: SnapshotRecord) -> None:
    """Record the run's end: 'landed' (the history model may apply it from now on) or 'failed'."""
    with conn.transaction():
        conn.execute(
            "update _migration.snapshot_log set status = %s, rows_landed = %s, error_message = %s,"
            " landed_at = case when %s = 'landed' then clock_timestamp() end where run_id = %s",
            (record.status, record.rows_landed, record.error_message, record.status, record.run_id),
        )


def interrupted(conn: psycopg.Connection, table_key: str) -> tuple[int, date, str, datetime] | None:
    """The table's latest snapshot run if it never ended (killed): run_id, as_of, origin, started_at."""
    row = conn.execute(
        "select run_id, as_of, origin, started_at, status from _migration.snapshot_log"
        " where table_key = %s order by run_id desc limit 1",
        (table_key,),
    ).fetchone()
    conn.commit()
    if row is None or row[4] != "running":
        return None
    return int(row[0]), row[1], str(row[2]), row[3]


def abandon(conn: psycopg.Connection, run_id: int) -> None:
    """A killed run that will not be resumed: failed, so that its rows are cleared."""
    with conn.transaction():
        conn.execute(
            "update _migration.snapshot_log set status = 'failed',"
            " error_message = 'interrupted; superseded by a later snapshot run' where run_id = %s",
            (run_id,),
        )


_AWAITING = """
select exists (
    select 1 from _migration.snapshot_log
    where table_key = %s and status = 'landed' and applied_at is null
)
"""

#: True for a landed snapshot row whose run waits to be applied.
_AWAITS_APPLY = (
    "exists (select 1 from _migration.snapshot_log as l"
    " where l.run_id = s._tidemark_run_id and l.status = 'landed' and l.applied_at is null)"
)


def clear_snapshots(conn: psycopg.Connection, names: TargetNames, keep: tuple[int, list[int]] = (0, [])) -> None:
    """Drop the landed rows no history needs: of applied and failed runs, and of killed runs,
    except the landed partitions `keep[1]` of run `keep[0]`, which is resumed."""
    row = conn.execute(_AWAITING, (names.table_key,)).fetchone()
    clear_landed_rows(conn, (names.schema, names.snapshot_table), bool(row and row[0]), _AWAITS_APPLY, keep)
