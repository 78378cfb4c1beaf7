"""`--full-refresh`: a full run lands every row in a table of its own (as a first sync does, with the
source's columns and key as they are now), which then replaces the replica in the transaction that
marks the run landed. Readers see the old replica until it commits and the new one after; the dbt
snapshots and as-of histories are tables of their own and keep the history.

The replacement is the run's merge: it is logged in the merge log with the runs it supersedes (those
landed before it and not merged), so no merge applies them after it. A view or foreign key on the old
replica stops it (PostgreSQL names the object), and nothing changes."""

from __future__ import annotations

from collections.abc import Sequence

import psycopg
from psycopg import sql

from extract.config.naming import TargetNames
from extract.landing.changed_keys import ensure_changed_keys
from extract.landing.replica_locks import with_lock_timeout
from extract.landing.staging import ensure_tables
from extract.planning.table_plan import TablePlan

_LOG_REPLACEMENT = """
insert into {merge_log} (
    table_key, run_ids, rows_in_batch, rows_inserted, rows_updated, rows_unchanged, rows_deleted,
    rows_key_changed, merge_started_at
)
select
    %(table)s,
    array(
        select pending.run_id from {pending_runs} as pending
        where pending.table_key = %(table)s and pending.run_id < %(run)s
        union all select %(run)s order by 1
    ),
    %(rows)s, %(rows)s, 0, 0, %(replaced)s, 0, now()
"""


def _count(conn: psycopg.Connection, table: sql.Composable) -> int:
    row = conn.execute(sql.SQL("select count(*) from {}").format(table)).fetchone()
    return int(row[0]) if row else 0


def replace_replica(conn: psycopg.Connection, plan: TablePlan, run_id: int) -> tuple[int, int]:
    """Make the run's first-sync table the replica, in the caller's transaction (under the merge lock);
    returns (rows in the new replica, rows the old one held)."""
    names: TargetNames = plan.names
    landed = sql.Identifier(names.schema, names.first_sync_table)
    replica = sql.Identifier(names.schema, names.table)
    required: Sequence[str] = [
        c.target_name for c in plan.columns if not c.source.nullable and c.target_name not in plan.key_columns
    ]
    replaced = _count(conn, replica)
    rows = _count(conn, landed)
    conn.execute(
        sql.SQL("alter table {} add primary key ({})").format(
            landed, sql.SQL(", ").join(map(sql.Identifier, plan.key_columns))
        )
    )
    for column in required:
        conn.execute(sql.SQL("alter table {} alter column {} set not null").format(landed, sql.Identifier(column)))
    # Staging, the tombstones and the changed keys hold the old columns and key, and only runs this one
    # supersedes; the kept figures are of the old table.
    superseded = (names.staging_table, names.tombstone_table, names.changed_keys_table, names.kept_figures_table)
    dropped = [replica, *(sql.Identifier(names.schema, t) for t in superseded)]

    def swap() -> None:
        conn.execute(sql.SQL("drop table {}").format(replica))
        for table in dropped[1:]:
            conn.execute(sql.SQL("drop table if exists {}").format(table))
        conn.execute(sql.SQL("alter table {} rename to {}").format(landed, sql.Identifier(names.table)))
        conn.execute(sql.SQL("alter table {} reset (autovacuum_enabled)").format(replica))

    with_lock_timeout(conn, [sql.Composed([t]).as_string(conn) for t in dropped], swap)
    ensure_tables(conn, names, plan.columns, plan.table.primary_key)
    ensure_changed_keys(conn, plan.state, names, plan.columns, plan.table.primary_key, "full refresh")
    conn.execute(
        plan.state.sql(_LOG_REPLACEMENT), {"table": names.table_key, "run": run_id, "rows": rows, "replaced": replaced}
    )
    return rows, replaced
