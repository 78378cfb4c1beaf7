"""The replicas a pass's dbt merges: those with runs waiting for a merge, and those that landed in the pass."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping

import psycopg

from extract.config.naming import TargetNames
from extract.config.urls import DatabaseUrl
from extract.core.state_schema import StateSchema


def tables_waiting(target: DatabaseUrl, state: StateSchema, table_keys: Iterable[str]) -> set[str]:
    """Those of `table_keys` (replicas, as the run log names them) with runs waiting for a merge."""
    with psycopg.connect(target.libpq_url, autocommit=True) as conn:
        if not state.has(conn, "pending_runs"):
            return set()
        rows = conn.execute(
            state.sql("select distinct table_key from {pending_runs} where table_key = any(%s)"), (list(table_keys),)
        ).fetchall()
    return {str(row[0]) for row in rows}


def models_to_merge(
    target: DatabaseUrl, state: StateSchema, replicas: Mapping[str, TargetNames], landed: Collection[str]
) -> list[str]:
    """The dbt models of `replicas` (by configured table) with runs waiting, or that `landed` in the pass: a
    run the extract applied itself (a full refresh replaces the replica) leaves nothing waiting, but its
    history and tests are still to run."""
    waiting = tables_waiting(target, state, [names.table_key for names in replicas.values()])
    return [names.model_name for table, names in replicas.items() if names.table_key in waiting or table in landed]
