"""What a reconcile refuses: a replica with runs still to merge, and deletes that look like a partial
read of the source (an empty source, or more than the allowed share of the replica)."""

from __future__ import annotations

import psycopg

from extract.core.errors import BatchRefused
from extract.planning.table_plan import TablePlan
from extract.source.dialects.postgres import PostgresDialect

_TARGET = PostgresDialect()


def refuse_pending_runs(conn: psycopg.Connection, plan: TablePlan) -> None:
    rows = conn.execute(
        plan.state.sql("select run_id from {pending_runs} where table_key = %s order by run_id"),
        (plan.names.table_key,),
    ).fetchall()
    conn.commit()
    if rows:
        runs = ", ".join(str(r[0]) for r in rows)
        raise BatchRefused(
            f"{plan.config.key}: run(s) {runs} landed and wait for a merge; a reconcile compares the merged "
            "replica: run dbt build first (or reconcile with --dbt build, which merges them before)"
        )


def replica_rows(conn: psycopg.Connection, plan: TablePlan) -> int:
    """The replica's exact row count; refused when the replica does not exist yet."""
    if conn.execute("select to_regclass(%s)", (_TARGET.table_ref(plan.names.schema, plan.names.table),)).fetchone() == (
        None,
    ):
        conn.commit()
        raise BatchRefused(f"{plan.config.key}: replica {plan.names.table_key} does not exist: sync it first")
    row = conn.execute(f"select count(*) from {_TARGET.table_ref(plan.names.schema, plan.names.table)}").fetchone()
    conn.commit()
    return 0 if row is None else int(row[0])


def check_guards(
    plan: TablePlan,
    replica: int,
    outside: int,
    tombstones: int,
    allowed: bool,
    share: float,
    source_empty: bool = False,
) -> None:
    """Refuse, naming why, unless --allow-mass-delete: nothing has been landed yet."""
    if allowed:
        return
    if source_empty and replica:
        raise BatchRefused(
            f"{plan.config.key}: the source returned no rows and the replica holds {replica:,}: refused, as a "
            "partial read looks the same; give --allow-mass-delete if the source table really is empty"
        )
    deletes = outside + tombstones
    if replica and deletes > share * replica:
        raise BatchRefused(
            f"{plan.config.key}: {deletes:,} of the replica's {replica:,} rows ({deletes / replica:.1%}) would be "
            f"deleted, more than TIDEMARK_RECONCILE_MAX_DELETE_SHARE ({share:.0%}): refused, as a partial read of "
            "the source looks the same; give --allow-mass-delete if the source really deleted them"
        )
