"""What a reconcile refuses: a replica with runs still to merge, and deletes that look like a partial
read of the source (an empty source, or more rows than allowed that are also more than the allowed
share of the replica)."""

from __future__ import annotations

from dataclasses import dataclass

import psycopg
from psycopg import sql

from extract.config import spec
from extract.config.reconcile_settings import ReconcileSettings
from extract.core.errors import BatchRefused
from extract.core.sql_contract import RUN_ID_COLUMN
from extract.planning.table_plan import TablePlan
from extract.reconcile.kept_figures import kept_rows
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


def replica_rows(conn: psycopg.Connection, plan: TablePlan, estimate: bool = False) -> int:
    """The replica's exact row count; refused when the replica does not exist yet. With `estimate`, the rows
    of the figures the last reconcile kept, where there are any: enough to choose how the replica is cut
    into ranges, without counting every row."""
    if conn.execute("select to_regclass(%s)", (_TARGET.table_ref(plan.names.schema, plan.names.table),)).fetchone() == (
        None,
    ):
        conn.commit()
        raise BatchRefused(f"{plan.config.key}: replica {plan.names.table_key} does not exist: sync it first")
    kept = kept_rows(conn, plan.names) if estimate else None
    if kept is not None:
        return kept
    row = conn.execute(f"select count(*) from {_TARGET.table_ref(plan.names.schema, plan.names.table)}").fetchone()
    conn.commit()
    return 0 if row is None else int(row[0])


@dataclass(frozen=True)
class DeleteGuard:
    """How much of a replica a reconcile deletes unasked: more than `rows` rows that are also more than
    `share` of it is refused. Both must be passed, so a small table's few deletes go, and a partial read
    of a large one (a filter, a permission) is stopped."""

    share: float
    rows: int

    @staticmethod
    def of(plan: TablePlan, settings: ReconcileSettings) -> DeleteGuard:
        """The table's guard: the seed's columns where set, else the settings'."""
        config = plan.config
        return DeleteGuard(
            settings.max_delete_share if config.max_delete_share is None else config.max_delete_share,
            settings.max_delete_rows if config.max_delete_rows is None else config.max_delete_rows,
        )

    def refuses(self, deletes: int, replica: int) -> bool:
        return deletes > self.rows and deletes > self.share * replica


def check_guards(
    plan: TablePlan,
    replica: int,
    deletes: int,
    allowed: bool,
    guard: DeleteGuard,
    source_empty: bool = False,
) -> None:
    """Refuse, naming why, unless --allow-mass-delete: `deletes` rows of the replica's `replica` would go
    (a key a record id shows moved is not one)."""
    if allowed:
        return
    if source_empty and replica:
        raise BatchRefused(
            f"{plan.config.key}: the source returned no rows and the replica holds {replica:,}: refused, as a "
            "partial read looks the same; give --allow-mass-delete if the source table really is empty"
        )
    if replica and guard.refuses(deletes, replica):
        raise BatchRefused(
            f"{plan.config.key}: {deletes:,} of the replica's {replica:,} rows ({deletes / replica:.1%}) would be "
            f"deleted, more than {guard.rows:,} rows and more than {guard.share:.0%} of it "
            f"({spec.RECONCILE_MAX_DELETE_ROWS.name}, {spec.RECONCILE_MAX_DELETE_SHARE.name}, or the table's "
            "max_delete_rows and max_delete_share in seeds/sync_tables.csv): refused, as a partial read of the "
            "source looks the same; give --allow-mass-delete if the source really deleted them"
        )


def moved_keys(conn: psycopg.Connection, plan: TablePlan, run_id: int) -> int:
    """Of the replica rows run `run_id` tombstoned, those whose record id the run also landed: keys that
    changed, which the merge moves (0 without a record id)."""
    record = plan.record_column
    if record is None:
        return 0
    names = plan.names
    keys = sql.SQL(" and ").join(
        sql.SQL("r.{} = t.{}").format(sql.Identifier(k), sql.Identifier(k)) for k in plan.key_columns
    )
    statement = sql.SQL(
        "select count(*) from {} as t join {} as r on {}"
        " where t.{} = %s and r.{} in (select s.{} from {} as s where s.{} = %s)"
    ).format(
        sql.Identifier(names.schema, names.tombstone_table),
        sql.Identifier(names.schema, names.table),
        keys,
        sql.Identifier(RUN_ID_COLUMN),
        sql.Identifier(record),
        sql.Identifier(record),
        sql.Identifier(names.schema, names.staging_table),
        sql.Identifier(RUN_ID_COLUMN),
    )
    row = conn.execute(statement, (run_id, run_id)).fetchone()
    conn.commit()
    return 0 if row is None else int(row[0])
