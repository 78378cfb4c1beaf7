"""Reconcile's reader: compare the replica with its source, classify, guard, and land the repairs.

A reconcile is a run of its own kind in the run log, under the table's extract lock, so a sync and a
reconcile of one table never overlap. It compares a merged replica: a table with runs waiting for a
merge is refused (dbt build first; `--dbt build` does it). Its repairs land as any run's rows do, and
the next merge applies them, tombstones and upserts in one statement. Its input state is the
registry's (changes since it are left to the sync); it commits none of its own: the cursor stays.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import closing
from dataclasses import dataclass

import psycopg

from extract.core.errors import BatchRefused, TidemarkError
from extract.core.observer import Note, Observer, silent
from extract.landing.clear_landed import awaits_merge, clear_landed_rows, clear_staging
from extract.landing.staging import analyze_landed
from extract.lifecycle.active_run import ActiveRun
from extract.lifecycle.context import RunContext
from extract.lifecycle.reader import ReaderKind
from extract.lifecycle.run import run_stream
from extract.planning.table_plan import TablePlan
from extract.readers.read_start import changed_rows_bound
from extract.readers.table_reader import RunLogReader
from extract.reconcile.boundary import KeyBounds, count_outside, key_bounds, tombstone_outside
from extract.reconcile.classify import Classifier, Repairs, TurnRepairs
from extract.reconcile.compare import Comparer
from extract.reconcile.guards import DeleteGuard, check_guards, moved_keys, refuse_pending_runs, replica_rows
from extract.reconcile.hashes import RowHashes, row_hashes
from extract.reconcile.kept_figures import KeptFigures
from extract.reconcile.repair import land_upserts, recheck
from extract.reconcile.repair_keys import RepairKeys, ignore_keys
from extract.reconcile.replica_side import (
    ReplicaSide,
    compared_replica,
    comparison_session,
    drop_stored_hashes,
    ensure_tombstone_table,
)
from extract.reconcile.result import ReconcileOptions, ReconcileResult, summary
from extract.reconcile.source_side import SourceSide, source_ranges, source_relation
from extract.reconcile.tree import Bisection, HashSpace
from extract.source.jdbc import JdbcConnection
from extract.source.pool import SourcePool
from extract.source.watermarks import usable_watermark
from extract.state.contract import StreamState
from extract.state.registry import committed_state
from extract.state.run_log import RunRecord


@dataclass
class ReconcileReader(RunLogReader):
    options: ReconcileOptions
    observer: Observer
    result: ReconcileResult | None = None

    def _say(self, text: str) -> None:
        self.observer(Note(self.table, text))

    def prepare(self, conn: psycopg.Connection) -> None:
        refuse_pending_runs(conn, self.plan)

    def input_state(self, conn: psycopg.Connection) -> StreamState | None:
        return committed_state(conn, self.state, self.table_key)

    def resume(self, conn: psycopg.Connection, killed: RunRecord, input_state: StreamState | None) -> None:
        return None  # a comparison is not resumable, and a killed reconcile's rows are never merged

    def _watermark(self, input_state: StreamState | None) -> str | None:
        committed = None if input_state is None else input_state.cursor_value
        return usable_watermark(self.context.dialect, self.plan.cursor, committed)

    def new_run(self, conn: psycopg.Connection, run_id: int, input_state: StreamState | None) -> RunRecord:
        plan = self.plan
        watermark = self._watermark(input_state)
        if plan.cursor is not None and watermark is None:
            raise TidemarkError(
                f"{plan.config.key} was never merged with its cursor {plan.cursor.name}: "
                "sync it (and dbt build) before a reconcile"
            )
        record = self.run_record(run_id, "reconcile", watermark)
        record.watermark_candidate, record.state_reason = self.options.restart_at, self.options.restart_reason
        return record

    def clear(self, conn: psycopg.Connection, keep: tuple[int, list[int]]) -> None:
        """What a killed run left: rows no merge will take (its run never landed)."""
        ensure_tombstone_table(conn, self.plan.names, self.plan.mapped_keys)
        clear_staging(conn, self.state, self.plan.names)
        self._clear_tombstones(conn)

    def _clear_tombstones(self, conn: psycopg.Connection) -> None:
        table = (self.plan.names.schema, self.plan.names.tombstone_table)
        clear_landed_rows(conn, table, True, awaits_merge(self.state), (0, ()))

    def read(self, run: ActiveRun[RunRecord]) -> None:
        context, plan, options, conn, record = self.context, self.plan, self.options, run.conn, run.record
        settings = context.settings.reconcile
        result = self.result = ReconcileResult(plan.config.key, self.table_key, record.run_id, "exact")
        bounds = key_bounds(context, plan)
        estimate = replica_rows(conn, plan, estimate=True)
        guard = DeleteGuard.of(plan, settings)
        result.boundary_deleted = 0 if bounds is None else count_outside(conn, plan, bounds)
        if bounds is not None and bounds.source_empty:
            total = replica_rows(conn, plan)
            check_guards(plan, total, result.boundary_deleted, options.allow_mass_delete, guard, source_empty=True)
        if drop_stored_hashes(conn, plan.names):
            self._say(f"dropped the hash columns {plan.names.table_key} kept: a reconcile hashes as it scans")
        hashes = row_hashes(context.dialect, plan, bounds)
        bisection = Bisection(HashSpace.of(settings.factor, hashes.key_bits), settings.leaf_rows)
        keys = RepairKeys(conn, plan.names, plan.mapped_keys, record.run_id)
        if not options.dry_run:  # a dry run lands nothing: of each turn's keys it keeps counts and samples
            keys.open()
        repairs = self._compare(
            conn, record, bounds, bisection, estimate, hashes, ignore_keys if options.dry_run else keys
        )
        # Every replica row lies in a range of the first level, or outside the source's key range.
        total = bisection.replica_rows + result.boundary_deleted
        result.levels, result.ranges_compared = bisection.queries, bisection.ranges
        deletes = result.boundary_deleted + repairs.deleted
        # Under a record id, a changed key is a delete until its row lands at its new key: such a table is
        # guarded again once its rows landed, the moves counted out.
        after_landing = (
            plan.record_column is not None
            and not (options.dry_run or options.allow_mass_delete)
            and guard.refuses(deletes, total)
        )
        if not after_landing:
            check_guards(plan, total, deletes, options.allow_mass_delete, guard)
        result.fill(repairs)
        if options.dry_run:
            record.status = result.status = "reported"
            return
        if not repairs.upserted and not repairs.deleted and not result.boundary_deleted:
            result.status = "exact"
            if options.restart_at is None:
                record.status = "exact"  # else it lands nothing, and its merge commits the new state
            return
        if bounds is not None and result.boundary_deleted:
            tombstone_outside(conn, plan, bounds, record.run_id)
            self._say(
                f"ANOMALY: {result.boundary_deleted:,} replica row(s) outside the source's key range "
                f"[{bounds.low}, {bounds.high}] tombstoned"
            )
        result.rows_landed = land_upserts(run, plan, keys, repairs.upserted)
        if after_landing:
            moved = moved_keys(conn, plan, record.run_id)
            check_guards(plan, total, deletes - moved, options.allow_mass_delete, guard)
        result.vanished = recheck(conn, context, plan, record.run_id)
        analyze_landed(conn, plan.names)
        result.status = "landed"

    def _compare(
        self,
        conn: psycopg.Connection,
        record: RunRecord,
        bounds: KeyBounds | None,
        bisection: Bisection,
        total: int,
        hashes: RowHashes,
        keep: Callable[[TurnRepairs], None],
    ) -> Repairs:
        context, plan = self.context, self.plan
        bound = changed_rows_bound(context, plan, record.watermark_used)
        conn.commit()  # the landing's own connections must see what this one writes next
        recent = (
            None
            if bound is None or plan.cursor is None
            else f"{context.dialect.quote(plan.cursor.name)} >= {context.dialect.cursor_literal(bound, plan.cursor)}"
        )
        # Both sides' pairs are read in one JVM, which matches them: Spark's driver may start meanwhile.
        jvm = context.runtime.source_jvm
        turns = SourcePool(lambda: jvm, context.settings.source)
        source = SourceSide(
            context,
            source_relation(context, plan, hashes, recent),
            bisection.space,
            source_ranges(context, plan, hashes, bounds, total),
            turns,
        )
        with closing(turns), psycopg.connect(context.settings.target.libpq_url, autocommit=False) as replica_conn:
            comparison_session(replica_conn)
            # Rows the boundary cleanup tombstones (all, when the source is empty) are not compared again.
            replica_side, last_place = compared_replica(plan, hashes, bounds)
            kept = KeptFigures(
                replica_conn, plan.names, replica_side, bisection.space, not self.options.dry_run, self._say, last_place
            )
            replica = ReplicaSide(
                replica_conn, replica_side, bisection.space, lambda: JdbcConnection(jvm, context.settings.target), kept
            )
            classifier = Classifier(bisection, recent is not None, keep)
            comparer = Comparer(source, replica, bisection, self.observer, plan.config.key, jvm, last_place)
            with closing(replica):
                first = bisection.space.first_depth(total, bisection.leaf_rows)
                null_keys = comparer.compare(first, context.settings.reconcile.pairs_rows, classifier)
        if null_keys:
            raise BatchRefused(
                f"{plan.config.key}: {null_keys:,} source row(s) have a NULL in a key column "
                f"({', '.join(plan.table.primary_key)}): a replica cannot hold them; fix the source"
            )
        return classifier.repairs

    def output_state(self, conn: psycopg.Connection, record: RunRecord) -> StreamState:
        """The cursor as it was: a reconcile repairs rows, it does not move the stream's position; unless it
        brings back a stream whose position expired (`restart_at`)."""
        restart = self.options.restart_at
        return StreamState(
            self.table_key,
            record.cursor_column,
            record.watermark_used if restart is None else restart,
            records_emitted=record.rows_landed or 0,
            reader=ReaderKind.RECONCILE_REPAIRS,
        )

    def commit(self, conn: psycopg.Connection, record: RunRecord) -> None:
        return None  # the next merge applies the repairs

    def discard(self, conn: psycopg.Connection, record: RunRecord) -> None:
        clear_staging(conn, self.state, self.plan.names)
        self._clear_tombstones(conn)


def reconcile_table(
    context: RunContext, plan: TablePlan, options: ReconcileOptions, observer: Observer = silent
) -> ReconcileResult:
    """One reconcile of one table, through the run lifecycle."""
    reader = ReconcileReader(context, plan, options, observer)
    record = run_stream(context, reader, observer)
    result = reader.result
    assert result is not None, "a run that ended read the table"
    result.input_state, result.output_state = record.input_state, record.output_state
    observer(Note(plan.config.key, summary(result)))
    return result
