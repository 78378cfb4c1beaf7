"""Snapshots landed for an as-of history, in the state schema's snapshot_log: one row per snapshot run.

The extract writes a run as 'running', then 'landed' or 'failed'; the history model
sets applied_at in the transaction that applies it. Landed rows of a snapshot stay
in its landing table until it is applied; the next snapshot extract clears them.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime

import psycopg
from psycopg.types.json import Jsonb

from extract.core.state_schema import StateSchema

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
    landed_by: str | None = None
    partition_positions: str | None = None
    error_message: str | None = None
    ended_at: datetime | None = None
    input_state: dict[str, object] | None = None
    output_state: dict[str, object] | None = None


def begin(conn: psycopg.Connection, state: StateSchema, record: SnapshotRecord) -> None:
    with conn.transaction():
        conn.execute(
            state.sql(
                "insert into {snapshot_log}"
                " (run_id, table_key, as_of, origin, status, rows_landed, started_at, input_state)"
                " values (%s, %s, %s, %s, 'running', 0, %s, %s)"
            ),
            (
                record.run_id,
                record.table_key,
                record.as_of,
                record.origin,
                record.started_at,
                None if record.input_state is None else Jsonb(record.input_state),
            ),
        )


def checkpoint(conn: psycopg.Connection, state: StateSchema, record: SnapshotRecord) -> None:
    """The run's progress while it lands, and the note of a retry (the partition log holds the rest)."""
    with conn.transaction():
        conn.execute(
            state.sql(
                "update {snapshot_log} set rows_landed = %s, error_message = %s"
                " where run_id = %s and status = 'running'"
            ),
            (record.rows_landed, record.error_message, record.run_id),
        )


def finish(conn: psycopg.Connection, state: StateSchema, record: SnapshotRecord) -> None:
    """Record the run's end: 'landed' (the history model may apply it from now on) or 'failed'."""
    with conn.transaction():
        conn.execute(
            state.sql(
                "update {snapshot_log} set status = %s, rows_landed = %s, error_message = %s, output_state = %s,"
                " landed_at = case when %s = 'landed' then clock_timestamp() end where run_id = %s"
            ),
            (
                record.status,
                record.rows_landed,
                record.error_message,
                None if record.output_state is None else Jsonb(record.output_state),
                record.status,
                record.run_id,
            ),
        )


def interrupted(conn: psycopg.Connection, state: StateSchema, table_key: str) -> SnapshotRecord | None:
    """The table's latest snapshot run if it never ended (killed)."""
    row = conn.execute(
        state.sql(
            "select l.run_id, l.as_of, l.origin, l.started_at, l.status, l.rows_landed,"
            " (select count(*) from {partition_log} as p where p.run_id = l.run_id)"
            " from {snapshot_log} as l where l.table_key = %s order by l.run_id desc limit 1"
        ),
        (table_key,),
    ).fetchone()
    conn.commit()
    if row is None or row[4] != "running":
        return None
    planned = int(row[6]) or None
    return SnapshotRecord(
        int(row[0]),
        table_key,
        "",
        "",
        row[1],
        str(row[2]),
        row[3],
        rows_landed=int(row[5] or 0),
        partitions_planned=planned,
    )


def abandon(conn: psycopg.Connection, state: StateSchema, run_id: int, by_run: int) -> None:
    """A killed run that will not be resumed: failed, so that its rows are cleared."""
    with conn.transaction():
        conn.execute(
            state.sql("update {snapshot_log} set status = 'failed', error_message = %s where run_id = %s"),
            (f"interrupted; superseded by run {by_run}", run_id),
        )
