"""The state's side of finding a table unchanged: which tables a pass may check instead of running (a
committed cursor value, and nothing waiting for a merge, running or to backfill), and the checks it
records for those it found unchanged (stream_checks in schema.sql), with what a check compared with the
replica (extract/readers/merged_already.py)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
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
    ) as plan_fingerprint,
    checks.compared::text,
    (select max(merged.merge_id) from {merge_log} as merged where merged.table_key = state.table_key) as last_merge
from {stream_state} as state
left join {stream_checks} as checks on state.table_key = checks.table_key
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
insert into {stream_checks} as checks (table_key, checked_through, checked_at, compared)
select checked.table_key, checked.through, %s, cast(checked.compared as jsonb)
from unnest(%s::text [], %s::text [], %s::text []) as checked (table_key, through, compared)
on conflict (table_key) do update set
    checked_through = excluded.checked_through,
    checked_at = excluded.checked_at,
    -- A check that compared nothing (a pass with another safety window, say) leaves the last comparison,
    -- which stands for the rows its digest names, while no merge comes.
    compared = coalesce(excluded.compared, checks.compared)
"""


@dataclass(frozen=True)
class Committed:
    """What a check of one table starts from."""

    cursor_value: str
    #: What the table's last check compared with the replica, as recorded (JSON), if it compared any row.
    compared: str | None
    #: The replica's latest merge (merge_log), if any: a check's comparison holds until the next.
    last_merge: int | None


def checkable(conn: psycopg.Connection, state: StateSchema, plans: Mapping[str, str]) -> dict[str, Committed]:
    """Those of `plans` (plan fingerprints by table key) a check may stand in for a run, with what their
    checks start from: their latest run was of the plan they have now."""
    ensure_state_schema(conn, state)
    rows = conn.execute(state.sql(_CHECKABLE), (list(plans),)).fetchall()
    conn.commit()
    return {
        str(key): Committed(str(value), compared, None if last_merge is None else int(last_merge))
        for key, value, fingerprint, compared, last_merge in rows
        if fingerprint == plans[key]
    }


def record_checks(
    conn: psycopg.Connection,
    state: StateSchema,
    through: Mapping[str, str],
    at: datetime,
    compared: Mapping[str, str],
) -> None:
    """The tables found unchanged, each with the source's clock or modify id read before the check, at `at`,
    and what the check compared with the replica (JSON, by table key; none for a table it did not compare)."""
    keys = list(through)
    with conn.transaction():
        conn.execute(state.sql(_RECORD), (at, keys, [through[key] for key in keys], [compared.get(k) for k in keys]))
