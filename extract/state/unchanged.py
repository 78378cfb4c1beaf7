"""The state's side of finding a table unchanged: which tables a pass may check instead of running (a
committed cursor value, and nothing waiting for a merge, running or to backfill), and the checks it
records for those it found unchanged (stream_checks in schema.sql)."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime

import psycopg

from extract.core.state_schema import StateSchema
from extract.state.run_log import ensure_state_schema

_CHECKABLE = """
select
    state.table_key,
    state.cursor_value,
    (
        select landed.plan_fingerprint from {run_log} as landed
        where landed.table_key = state.table_key and landed.status = 'landed' and landed.migration_type <> 'reconcile'
        order by landed.run_id desc
        limit 1
    ) as plan_fingerprint
from {stream_state} as state
where
    state.table_key = any(%s)
    and state.cursor_value is not null
    and not exists (select 1 from {pending_runs} as waiting where waiting.table_key = state.table_key)
    and not exists (select 1 from {backfills_due} as due where due.table_key = state.table_key)
    and coalesce((
        select latest.status from {run_log} as latest
        where latest.table_key = state.table_key
        order by latest.run_id desc, latest.event_id desc
        limit 1
    ), '') <> 'running'
"""

_RECORD = """
insert into {stream_checks} (table_key, checked_through, checked_at)
select checked.table_key, checked.through, %s
from unnest(%s::text [], %s::text []) as checked (table_key, through)
on conflict (table_key) do update set
    checked_through = excluded.checked_through, checked_at = excluded.checked_at
"""


def checkable(conn: psycopg.Connection, state: StateSchema, plans: Mapping[str, str]) -> dict[str, str]:
    """Those of `plans` (plan fingerprints by table key) a check may stand in for a run, with their committed
    cursor values: their latest run was of the plan they have now."""
    ensure_state_schema(conn, state)
    rows = conn.execute(state.sql(_CHECKABLE), (list(plans),)).fetchall()
    conn.commit()
    return {str(key): str(value) for key, value, fingerprint in rows if fingerprint == plans[key]}


def record_checks(conn: psycopg.Connection, state: StateSchema, through: Mapping[str, str], at: datetime) -> None:
    """The tables found unchanged, each with the source's clock or modify id read before the check, at `at`."""
    keys = list(through)
    with conn.transaction():
        conn.execute(state.sql(_RECORD), (at, keys, [through[key] for key in keys]))
