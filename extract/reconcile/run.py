"""One reconcile of one table: compare the replica with its source, classify, guard, land the repairs.

A reconcile is a run of its own kind in the run log, under the table's extract lock, so a sync
and a reconcile of one table never overlap. It compares a merged replica: a table with runs
waiting for a merge is refused (dbt build first; `--dbt build` does it). Its repairs land as any
run's rows do, and the next merge applies them, tombstones and upserts in one statement.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime

import psycopg

from extract.core.errors import BatchRefused, TidemarkError, first_line
from extract.core.observer import Observer, silent
from extract.core.sql_contract import RUN_ID_COLUMN
from extract.landing.staging import analyze_landed, clear_landed_rows, clear_staging
from extract.planning.planner import Planner
from extract.planning.table_plan import TablePlan
from extract.reconcile.boundary import KeyBounds, count_outside, key_bounds, tombstone_outside
from extract.reconcile.classify import Classifier, Pair, Repairs
from extract.reconcile.compare import Comparer
from extract.reconcile.guards import check_guards, refuse_pending_runs, replica_rows
from extract.reconcile.hashes import row_hashes
from extract.reconcile.repair import land_all_tombstones, land_upserts, recheck
from extract.reconcile.replica_side import (
    ReplicaSide,
    ensure_hash_columns,
    ensure_tombstone_table,
    replica_relation,
)
from extract.reconcile.source_side import SourceSide, source_ranges, source_relation
from extract.reconcile.tree import Bisection, HashSpace
from extract.source.watermarks import usable_watermark
from extract.state.run_log import (
    RunRecord,
    append_event,
    committed_watermark,
    ensure_state_schema,
    next_run_id,
    try_extract_lock,
)


@dataclass
class ReconcileResult:
    table: str
    target: str
    run_id: int
    status: str  # exact, landed (repairs wait for the merge), reported (--dry-run)
    inserted: int = 0
    updated: int = 0
    deleted: int = 0
    boundary_deleted: int = 0
    left_to_sync: int = 0
    unsettled_ranges: int = 0
    vanished: int = 0
    rows_landed: int = 0
    ranges_compared: int = 0
    levels: int = 0
    samples: dict[str, list[str]] = field(default_factory=dict)


@dataclass(frozen=True)
class ReconcileOptions:
    dry_run: bool = False
    allow_mass_delete: bool = False


class ReconcileRun:
    def __init__(self, planner: Planner, plan: TablePlan, options: ReconcileOptions, observer: Observer = silent):
        self.planner, self.plan, self.options, self.observer = planner, plan, options, observer
        self.hashes = row_hashes(planner.dialect, plan)
        self._source_pairs: list[Pair] = []

    def _say(self, text: str) -> None:
        self.observer("note", {"table": self.plan.config.key, "run": None, "text": text})

    def _begin(self, conn: psycopg.Connection) -> RunRecord:
        plan = self.plan
        watermark = usable_watermark(self.planner.dialect, plan.cursor, committed_watermark(conn, plan.names.table_key))
        if plan.cursor is not None and watermark is None:
            raise TidemarkError(
                f"{plan.config.key} was never merged with its cursor {plan.cursor.name}: "
                "sync it (and dbt build) before a reconcile"
            )
        record = RunRecord(
            run_id=next_run_id(conn),
            table_key=plan.names.table_key,
            source_schema=plan.table.schema,
            source_table=plan.table.name,
            target_schema=plan.names.schema,
            target_table=plan.names.table,
            migration_type="reconcile",
            cursor_column=plan.cursor.name if plan.cursor else None,
            watermark_used=watermark,
            started_at=datetime.now(UTC),
            rows_landed=0,
        )
        conn.commit()
        append_event(conn, record)
        # What a killed run left: rows no merge will take (its run never landed).
        ensure_tombstone_table(conn, plan.names, plan.mapped_keys)
        clear_staging(conn, plan.names)
        self._clear_tombstones(conn)
        return record

    def run(self) -> ReconcileResult:
        plan = self.plan
        with psycopg.connect(self.planner.settings.target.libpq_url, autocommit=False) as conn:
            ensure_state_schema(conn)
            if not try_extract_lock(conn, plan.names.table_key):
                raise TidemarkError(f"a sync or reconcile of {plan.config.key} is running; try again when it ends")
            conn.commit()
            refuse_pending_runs(conn, plan)
            record = self._begin(conn)
            try:
                result = self._reconcile(conn, record)
            except Exception as exc:
                conn.rollback()
                record.status, record.error_message = "failed", first_line(exc)
                record.ended_at = datetime.now(UTC)
                append_event(conn, record)
                clear_staging(conn, plan.names)
                self._clear_tombstones(conn)
                self.observer("failed", {"table": plan.config.key, "run": record})
                raise
        return result

    def _clear_tombstones(self, conn: psycopg.Connection) -> None:
        table = (self.plan.names.schema, self.plan.names.tombstone_table)
        clear_landed_rows(
            conn, table, True, f"s.{RUN_ID_COLUMN} in (select run_id from _migration.pending_runs)", (0, ())
        )

    def _reconcile(self, conn: psycopg.Connection, record: RunRecord) -> ReconcileResult:
        planner, plan, options = self.planner, self.plan, self.options
        settings = planner.settings.reconcile
        result = ReconcileResult(plan.config.key, plan.names.table_key, record.run_id, "exact")
        bounds = key_bounds(planner, plan)
        total = replica_rows(conn, plan)
        result.boundary_deleted = 0 if bounds is None else count_outside(conn, plan, bounds)
        if bounds is not None and bounds.source_empty:
            check_guards(
                plan,
                total,
                result.boundary_deleted,
                0,
                options.allow_mass_delete,
                settings.max_delete_share,
                source_empty=True,
            )
        if ensure_hash_columns(conn, plan.names, self.hashes):
            self._say(f"stored row hashes in {plan.names.table_key} (once, {total:,} rows)")
        space = HashSpace(settings.factor)
        bisection = Bisection(space, settings.leaf_rows)
        repairs = self._compare(conn, bounds, bisection, total)
        result.levels, result.ranges_compared = bisection.queries, len(bisection.source)
        check_guards(
            plan,
            total,
            result.boundary_deleted,
            len(repairs.tombstones),
            options.allow_mass_delete,
            settings.max_delete_share,
        )
        self._fill(result, repairs)
        if options.dry_run:
            return self._end(conn, record, result, "reported")
        if not repairs.upserts and not repairs.tombstones and not result.boundary_deleted:
            return self._end(conn, record, result, "exact")
        if bounds is not None and result.boundary_deleted:
            tombstone_outside(conn, plan, bounds, record.run_id)
            self._say(
                f"ANOMALY: {result.boundary_deleted:,} replica row(s) outside the source's key range "
                f"[{bounds.low}, {bounds.high}] tombstoned"
            )
        land_all_tombstones(conn, plan, record.run_id, repairs)
        result.rows_landed = land_upserts(conn, planner, plan, record, repairs)
        result.vanished = recheck(conn, planner, plan, record.run_id, self._source_pairs, repairs)
        analyze_landed(conn, plan.names)
        return self._end(conn, record, result, "landed")

    def _compare(self, conn: psycopg.Connection, bounds: KeyBounds | None, bisection: Bisection, total: int) -> Repairs:
        planner, plan = self.planner, self.plan
        committed = committed_watermark(conn, plan.names.table_key)
        bound = planner.changed_rows_bound(plan, usable_watermark(planner.dialect, plan.cursor, committed))
        conn.commit()  # the landing's own connections must see what this one writes next
        recent = (
            None
            if bound is None or plan.cursor is None
            else f"{planner.dialect.quote(plan.cursor.name)} >= {planner.dialect.cursor_literal(bound, plan.cursor)}"
        )
        source = SourceSide(
            planner,
            source_relation(planner, plan, self.hashes, recent),
            bisection.space,
            source_ranges(planner, plan, bounds, total),
        )
        # Rows the boundary cleanup tombstones (all, when the source is empty) are not compared again.
        within = "" if bounds is None else ("false" if bounds.source_empty else bounds.inside)
        with psycopg.connect(planner.settings.target.libpq_url, autocommit=False) as replica_conn:
            replica = ReplicaSide(replica_conn, replica_relation(plan, self.hashes, within), bisection.space)
            first = bisection.space.first_depth(total, bisection.leaf_rows)
            classifier = Classifier(bisection, recent is not None)
            pairs_rows = planner.settings.reconcile.pairs_rows
            comparer = Comparer(source, replica, bisection, self.observer, plan.config.key)
            null_keys = comparer.compare(first, pairs_rows, classifier)
        if null_keys:
            raise BatchRefused(
                f"{plan.config.key}: {null_keys:,} source row(s) have a NULL in a key column "
                f"({', '.join(plan.table.primary_key)}): a replica cannot hold them; fix the source"
            )
        self._source_pairs = classifier.compared
        return classifier.repairs

    @staticmethod
    def _fill(result: ReconcileResult, repairs: Repairs) -> None:
        result.inserted, result.updated, result.deleted = repairs.inserted, repairs.changed, len(repairs.tombstones)
        result.left_to_sync, result.unsettled_ranges, result.samples = (
            repairs.left_to_sync,
            repairs.unsettled,
            repairs.samples,
        )

    def _end(
        self, conn: psycopg.Connection, record: RunRecord, result: ReconcileResult, status: str
    ) -> ReconcileResult:
        record.status, result.status = status, status
        record.rows_landed = result.rows_landed
        record.ended_at = datetime.now(UTC)
        append_event(conn, record)
        self.observer("note", {"table": self.plan.config.key, "run": record, "text": _summary(result)})
        return result


def _summary(result: ReconcileResult) -> str:
    found = (
        f"{result.inserted:,} missing, {result.updated:,} different, "
        f"{result.deleted + result.boundary_deleted:,} deleted in the source"
    )
    then = {
        "exact": "the replica is exact",
        "reported": "dry run: nothing landed",
        "landed": "repairs landed; dbt build applies them",
    }[result.status]
    extra = f"; {result.left_to_sync:,} recent change(s) left to the sync" if result.left_to_sync else ""
    return f"run {result.run_id}: {found}{extra}; {then}"
