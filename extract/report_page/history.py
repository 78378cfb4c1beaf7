"""The run history a report plots, from the state in the target: each run with its merge."""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from typing import Any

import psycopg
from psycopg.rows import dict_row

from extract.core.state_schema import StateSchema

_RUNS = """
select
    source_schema || '.' || source_table as "table",
    run_id,
    migration_type as kind,
    status,
    coalesce(rows_landed, 0) as rows_landed,
    started_at,
    extract(epoch from ended_at - started_at) as landing_seconds,
    extract(epoch from merged_at - merge_started_at) as merge_seconds,
    extract(epoch from merged_at - started_at) as lag_seconds,
    error_message
from {run_history}
where started_at >= clock_timestamp() - make_interval(days => %s)
order by run_id
"""


def _plain(value: object) -> object:
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, Decimal):
        return round(float(value), 3)
    return value


def run_history(conn: psycopg.Connection[Any], state: StateSchema, days: int) -> list[dict[str, object]]:
    """Every run of the last `days` days, oldest first, as JSON values (none before the first run)."""
    if not state.has(conn, "run_history"):
        return []
    with conn.cursor(row_factory=dict_row) as cursor:
        rows = cursor.execute(state.sql(_RUNS), (days,)).fetchall()
    return [{key: _plain(value) for key, value in row.items()} for row in rows]
