"""The run history a report plots, from the state in the target: each run with its merge."""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from typing import Any

import psycopg
from psycopg.rows import dict_row

_RUNS = """
select
    runs.source_schema || '.' || runs.source_table as "table",
    runs.run_id,
    runs.migration_type as kind,
    runs.status,
    coalesce(runs.rows_landed, 0) as rows_landed,
    runs.started_at,
    extract(epoch from runs.ended_at - runs.started_at) as landing_seconds,
    merged.merged_at,
    extract(epoch from merged.merged_at - merged.merge_started_at) as merge_seconds,
    extract(epoch from merged.merged_at - runs.started_at) as lag_seconds,
    coalesce(merged.rows_inserted, 0) + coalesce(merged.rows_updated, 0) + coalesce(merged.rows_deleted, 0)
        as rows_merged,
    runs.error_message
from _migration.runs as runs
left join lateral (
    select m.* from _migration.merge_log as m
    where m.table_key = runs.table_key and runs.run_id = any(m.run_ids)
    order by m.merge_id
    limit 1
) as merged on true
where runs.started_at >= clock_timestamp() - make_interval(days => %s)
order by runs.run_id
"""


def _plain(value: object) -> object:
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, Decimal):
        return round(float(value), 3)
    return value


def run_history(conn: psycopg.Connection[Any], days: int) -> list[dict[str, object]]:
    """Every run of the last `days` days, oldest first, as JSON values (none before the first run)."""
    found = conn.execute("select to_regclass('_migration.runs') is not null").fetchone()
    if not found or not found[0]:
        return []
    with conn.cursor(row_factory=dict_row) as cursor:
        rows = cursor.execute(_RUNS, (days,)).fetchall()
    return [{key: _plain(value) for key, value in row.items()} for row in rows]
