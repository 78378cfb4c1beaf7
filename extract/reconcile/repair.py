"""Land a reconcile's repairs: the upserted keys re-read from the source into staging (the sync's
landing, one partition per list of keys), the tombstones into their own table; then re-check what
landed against the rows that were compared, before the run is marked landed."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import psycopg
from psycopg import sql

from extract.core.errors import KEY_PLACE, KeyValueRefused
from extract.core.sql_contract import RUN_ID_COLUMN
from extract.landing.progress_watch import ProgressCallback, RunTarget
from extract.landing.transfer import land_in_driver, land_partitions
from extract.lifecycle.active_run import ActiveRun
from extract.lifecycle.context import RunContext
from extract.partitions.plan import Partition, Segment
from extract.planning.table_plan import TablePlan
from extract.reconcile.classify import Repairs
from extract.reconcile.hashes import row_hashes
from extract.reconcile.replica_side import ISO_DATES_LOCAL, land_tombstones
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


def land_upserts(run: ActiveRun[RunRecord], plan: TablePlan, repairs: Repairs) -> int:
    """Re-read every upserted key from the source into staging, tagged with the run; returns rows landed."""
    keys = list(repairs.upserts.values())
    if not keys:
        return 0
    context, record = run.context, run.record
    size = KEYS_PER_PARTITION if len(plan.source_keys) == 1 else KEYS_PER_PARTITION_COMPOSITE
    chunks = [keys[i : i + size] for i in range(0, len(keys), size)]
    order = tuple(plan.source_keys)
    parts = [Segment(f"keys {i}", order, _key_filter(context, plan, chunk)) for i, chunk in enumerate(chunks, 1)]
    partitions = [Partition(i, part.name, None, None) for i, part in enumerate(parts, 1)]
    record.landed_by = "driver" if context.fits_driver(len(keys)) else "spark"
    run.plan(partitions, len(keys))
    lands = land_in_driver if record.landed_by == "driver" else land_partitions
    staging = (plan.names.schema, plan.names.staging_table)
    source, settings = context.partition_source(plan.table, plan.columns), context.settings
    target = RunTarget(settings.target, settings.state_schema, record.run_id)

    def land(pending: list[Partition], checkpoint: ProgressCallback, fetch_rows: int) -> None:
        lands(source.fetching(fetch_rows), parts, pending, plan.columns, target, staging, checkpoint)

    run.land(partitions, set(), land)
    return record.rows_landed or 0


def land_all_tombstones(conn: psycopg.Connection, plan: TablePlan, run_id: int, repairs: Repairs) -> None:
    land_tombstones(conn, plan.names, plan.mapped_keys, list(repairs.tombstones.values()), run_id)


#: Re-read rows the re-check takes from the server at a time.
RECHECK_BATCH = 10_000


def recheck(
    conn: psycopg.Connection,
    context: RunContext,
    plan: TablePlan,
    run_id: int,
    compared: Mapping[str, str],
    repairs: Repairs,
) -> int:
    """Each re-read row must hash as its source row did when compared: else the two sides' texts of a
    row disagree (or the source changed meanwhile), and nothing is applied. Returns the keys that
    vanished from the source between the comparison and the re-read (left to the next reconcile)."""
    staged = row_hashes(context.dialect, plan, qualifier="s.")
    conn.execute(ISO_DATES_LOCAL)
    cursor = conn.execute(
        sql.SQL("select {}, {} from {} as s where s.{} = %s").format(
            sql.SQL(staged.replica_key_text),
            sql.SQL(staged.replica_row),
            sql.Identifier(plan.names.schema, plan.names.staging_table),
            sql.Identifier(RUN_ID_COLUMN),
        ),
        (run_id,),
    )
    # In batches: at 1% of 10,000,000 rows, the whole answer as Python objects was tens of megabytes.
    landed: set[str] = set()
    differ, first = 0, ""
    while batch := cursor.fetchmany(RECHECK_BATCH):
        for key, row_hash in batch:
            landed.add(str(key))
            if compared.get(str(key)) != str(row_hash):
                differ, first = differ + 1, first or str(key)
    conn.commit()
    if differ:
        raise KeyValueRefused(
            f"LOGICAL ERROR: bisection completeness: {differ} re-read row(s) do not hash as the rows compared "
            f"({KEY_PLACE} among them): the source changed while it was reconciled, or the two databases write "
            "a value of this row differently; nothing was applied, run the reconcile again",
            repr(first),
        )
    return sum(1 for key in repairs.upserts if key not in landed)
