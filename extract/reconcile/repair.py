"""Land a reconcile's repairs: the upserted keys re-read from the source into staging (the sync's
landing, one partition per list of keys; the tombstones landed as they were found); then re-check
what landed against the rows that were compared, before the run is marked landed."""

from __future__ import annotations

from collections.abc import Sequence

import psycopg
from psycopg import sql

from extract.core.errors import KEY_PLACE, KeyValueRefused
from extract.core.sql_contract import RUN_ID_COLUMN
from extract.landing.progress_watch import ProgressCallback
from extract.landing.transfer import land_in_driver, land_partitions
from extract.lifecycle.active_run import ActiveRun
from extract.lifecycle.context import RunContext
from extract.partitions.plan import Partition, Segment
from extract.planning.table_plan import TablePlan
from extract.reconcile.hashes import row_hashes
from extract.reconcile.repair_keys import RepairKeys, upsert_keys_table
from extract.reconcile.replica_side import ISO_DATES_LOCAL
from extract.source.dialects.postgres import PostgresDialect
from extract.state.run_log import RunRecord

#: Keys read by one partition: one statement whose filter lists them (a key of several columns lists
#: each as a conjunction, heavier to plan).
KEYS_PER_PARTITION = 2000
KEYS_PER_PARTITION_COMPOSITE = 500
_TARGET = PostgresDialect()


def _key_filter(context: RunContext, plan: TablePlan, keys: Sequence[tuple[str, ...]]) -> str:
    dialect = context.dialect
    columns = plan.source_keys
    if len(columns) == 1:
        literals = ", ".join(dialect.position_literal(k[0], columns[0]) for k in keys)
        return f"{dialect.quote(columns[0].name)} in ({literals})"
    matches = (
        " and ".join(
            f"{dialect.quote(c.name)} = {dialect.position_literal(v, c)}" for c, v in zip(columns, k, strict=True)
        )
        for k in keys
    )
    return " or ".join(f"({m})" for m in matches)


def land_upserts(run: ActiveRun[RunRecord], plan: TablePlan, keys: RepairKeys, count: int) -> int:
    """Re-read the `count` upserted keys from the source into staging, tagged with the run; returns rows
    landed."""
    if not count:
        return 0
    context, record = run.context, run.record
    size = KEYS_PER_PARTITION if len(plan.source_keys) == 1 else KEYS_PER_PARTITION_COMPOSITE
    order = tuple(plan.source_keys)
    parts = [
        Segment(f"keys {i}", order, _key_filter(context, plan, chunk))
        for i, chunk in enumerate(keys.positions(size), 1)
    ]
    partitions = [Partition(i, part.name, None, None) for i, part in enumerate(parts, 1)]
    record.landed_by = "driver" if context.fits_driver(count) else "spark"
    run.plan(partitions, count)
    lands = land_in_driver if record.landed_by == "driver" else land_partitions
    staging = (plan.names.schema, plan.names.staging_table)
    source = context.partition_source(plan.table, plan.columns)
    target = context.run_target(record.run_id)

    def land(pending: list[Partition], checkpoint: ProgressCallback, fetch_rows: int) -> None:
        lands(source.fetching(fetch_rows), parts, pending, plan.columns, target, staging, checkpoint)

    run.land(partitions, set(), land)
    return record.rows_landed or 0


#: A row that landed under a key not compared, or that does not hash as its source row did when compared.
_RECHECK_DIFFERS = sql.SQL("l.key_text is not null and (k.key_text is null or k.compared is distinct from l.row_hash)")


def recheck(conn: psycopg.Connection, context: RunContext, plan: TablePlan, run_id: int) -> int:
    """Each re-read row must hash as its source row did when compared: else the two sides' texts of a
    row disagree (or the source changed meanwhile), and nothing is applied. Returns the keys that
    vanished from the source between the comparison and the re-read (left to the next reconcile).
    The server matches what landed with the keys compared (repair_keys.py): the driver holds neither."""
    staged = row_hashes(context.dialect, plan, qualifier="s.")
    conn.execute(ISO_DATES_LOCAL)
    row = conn.execute(
        sql.SQL(
            "select count(*) filter (where {differs}), min(l.key_text) filter (where {differs}),"
            " count(*) filter (where l.key_text is null)"
            " from (select {} as key_text, cast({} as text) as row_hash from {} as s where s.{} = %s) as l"
            " full join {} as k on k.key_text = l.key_text"
        ).format(
            sql.SQL(staged.replica_key_text),
            sql.SQL(staged.replica_row),
            sql.Identifier(plan.names.schema, plan.names.staging_table),
            sql.Identifier(RUN_ID_COLUMN),
            upsert_keys_table(),
            differs=_RECHECK_DIFFERS,
        ),
        (run_id,),
    ).fetchone()
    conn.commit()
    differ, first, vanished = (0, None, 0) if row is None else row
    if differ:
        raise KeyValueRefused(
            f"LOGICAL ERROR: bisection completeness: {differ} re-read row(s) do not hash as the rows compared "
            f"({KEY_PLACE} among them): the source changed while it was reconciled, or the two databases write "
            "a value of this row differently; nothing was applied, run the reconcile again",
            repr(first),
        )
    return int(vanished)
