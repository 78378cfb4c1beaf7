"""One extract run of one table: read the clock, cut the batch into partitions, land them, log it."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

import psycopg

from extract.config.seeds import SyncTable
from extract.core.errors import BatchRefused, TidemarkError, first_line
from extract.core.observer import Observer, silent
from extract.evolution.apply import backfill_due
from extract.evolution.follow import prepare_tables
from extract.evolution.full_refresh import replace_replica
from extract.landing.first_sync import drop_first_sync_table, prepare_landing, promote
from extract.landing.staging import (
    analyze_landed,
    clear_staging,
    duplicate_key_sample,
    keep_latest_versions,
    key_sample,
)
from extract.landing.transfer import land_in_driver, land_partitions
from extract.partitions.plan import plan_partitions, source_filter
from extract.planning.planner import Planner
from extract.planning.table_plan import TablePlan
from extract.source.watermarks import check_monotonic, read_watermark, usable_watermark
from extract.state.partition_log import Progress, load_plan, progress, record_plan
from extract.state.run_log import (
    RunRecord,
    append_event,
    committed_watermark,
    ensure_state_schema,
    interrupted_run,
    merge_lock_sql,
    next_run_id,
    try_extract_lock,
)


@dataclass(frozen=True)
class RunResult:
    table: str
    target: str
    run_id: int
    migration_type: str
    rows_landed: int
    watermark_used: str | None
    watermark_candidate: str
    #: What this run changed in the replica to follow the source's schema (extract/evolution).
    schema_changes: list[str]


def run_table(
    planner: Planner,
    config: SyncTable,
    observer: Observer = silent,
    plan: TablePlan | None = None,
    refresh: bool = False,
) -> RunResult:
    """Land the table's changed rows (`plan`: the table as planned already, else planned now); with
    `refresh`, every row, to replace the replica (extract/evolution/full_refresh.py)."""
    return TableRun(planner, planner.plan(config) if plan is None else plan, observer, refresh).run()


class TableRun:
    def __init__(self, planner: Planner, plan: TablePlan, observer: Observer, refresh: bool = False) -> None:
        self.planner = planner
        self.plan = plan
        self.observer = observer
        self.refresh = refresh

    def _begin(self, conn: psycopg.Connection) -> tuple[RunRecord, bool]:
        """A new run, or the killed run of this table to go on with (same watermark, same partitions)."""
        plan = self.plan
        names = plan.names
        committed = committed_watermark(conn, names.table_key)
        backfill = backfill_due(conn, names.table_key)
        if backfill is not None:
            self.observer("note", {"table": plan.config.key, "run": None, "text": f"every row read to fill {backfill}"})
        if self.refresh or backfill:
            watermark_used = None
        else:
            watermark_used = usable_watermark(self.planner.dialect, plan.cursor, committed)
        killed = interrupted_run(conn, names.table_key)
        if killed is not None and killed.watermark_used == watermark_used:
            return killed, True
        clear_staging(conn, names)
        record = RunRecord(
            run_id=next_run_id(conn),
            table_key=names.table_key,
            source_schema=plan.table.schema,
            source_table=plan.table.name,
            target_schema=names.schema,
            target_table=names.table,
            migration_type="incremental" if watermark_used else "full",
            cursor_column=plan.cursor.name if plan.cursor else None,
            watermark_used=watermark_used,
            started_at=datetime.now(UTC),
            source_filter=source_filter(self.planner.read_segments(plan, watermark_used)),
            rows_landed=0,
            partitions_landed=0,
        )
        conn.commit()
        append_event(conn, record)
        return record, False

    def _plan_partitions(self, conn: psycopg.Connection, record: RunRecord) -> None:
        """Read the clock, then cut the batch into partitions; both are recorded before any row is read."""
        plan, observer = self.plan, self.observer
        # The watermark is read before the data query: a row committed later is read next time.
        record.watermark_candidate = read_watermark(self.planner.source, self.planner.dialect, plan.cursor)
        check_monotonic(plan.config.key, record.watermark_used, record.watermark_candidate)
        observer("watermark", {"table": plan.config.key, "run": record})
        parts = self.planner.read_segments(plan, record.watermark_used)
        session_started = False

        def counted(rows: int) -> None:
            nonlocal session_started
            if not session_started and not self.planner.fits_driver(rows):
                session_started = True
                self.planner.runtime.start_session()  # meanwhile the source finds the cut points

        table_ref = self.planner.table_ref(plan)
        partitions, rows = plan_partitions(
            self.planner.source, self.planner.dialect, table_ref, parts, self.planner.sizing, counted
        )
        record.partitions_planned = len(partitions)
        record.rows_planned = rows
        record.landed_by = "driver" if self.planner.fits_driver(rows) else "spark"
        with conn.transaction():
            record_plan(conn, record.run_id, partitions)
            append_event(conn, record)
        observer("planned", {"table": plan.config.key, "run": record})

    def _read(self, conn: psycopg.Connection, record: RunRecord, resumed: bool) -> bool:
        """Land every partition not landed yet, in parallel; then refuse a batch with a repeated key.
        Returns whether the run landed as a first sync (extract/landing/first_sync.py)."""
        plan, observer = self.plan, self.observer
        if not resumed:
            self._plan_partitions(conn, record)
        partitions, landed = load_plan(conn, record.run_id)
        clear_staging(conn, plan.names, keep=(record.run_id, sorted(landed)))
        first_sync = prepare_landing(
            conn,
            plan.names,
            plan.columns,
            full_run=record.migration_type == "full",
            resumed_partitions=bool(landed),
            replace=self.refresh,
        )
        landing = (plan.names.schema, plan.names.first_sync_table if first_sync else plan.names.staging_table)
        pending = [p for p in partitions if p.number not in landed]

        def checkpoint(watch_conn: psycopg.Connection, current: Progress) -> None:
            record.partitions_landed = current.partitions_landed
            record.rows_landed = current.rows_landed
            record.partition_positions = current.last_position
            append_event(watch_conn, record)  # a checkpoint: the status stays 'running'
            observer("partition", {"table": plan.config.key, "run": record})

        if pending:
            lands = land_in_driver if record.landed_by == "driver" else land_partitions
            lands(
                self.planner.partition_source(plan),
                self.planner.read_segments(plan, record.watermark_used),
                pending,
                plan.columns,
                self.planner.settings.target,
                landing,
                record.run_id,
                checkpoint,
                tagged=not first_sync,
            )
        final = progress(conn, record.run_id)
        record.partitions_landed, record.rows_landed = final.partitions_landed, final.rows_landed
        record.partition_positions = final.last_position
        cursor = plan.cursor
        if plan.table.key_enforced and (cursor is None or not record.watermark_used):
            return first_sync  # key ranges, read in key order, hold each key of an enforced key once
        # A first sync's table holds this run's rows only, and no run id.
        duplicate = duplicate_key_sample(conn, landing, plan.key_columns, None if first_sync else record.run_id)
        if duplicate is not None and plan.table.key_enforced and cursor is not None:
            # Changed rows are read in cursor order: a row that changed meanwhile can be read twice.
            target = next(c.target_name for c in plan.columns if c.source.name == cursor.name)
            keep_latest_versions(conn, plan.names, plan.key_columns, target, record.run_id)
        elif duplicate is not None:
            sample = key_sample(plan.table.primary_key, duplicate)
            raise BatchRefused(
                f"{plan.config.key}: the batch holds the key ({sample}) more than once; the source does not "
                "enforce this key. Fix the source or set primary_key in seeds/sync_tables.csv"
            )
        return first_sync

    def run(self) -> RunResult:
        plan, config, observer = self.plan, self.plan.config, self.observer
        names = plan.names
        with psycopg.connect(self.planner.settings.target.libpq_url, autocommit=False) as conn:
            ensure_state_schema(conn)
            if not try_extract_lock(conn, names.table_key):
                raise TidemarkError(f"a sync or reconcile of {config.key} is running; try again when it ends")
            conn.commit()
            schema_changes = prepare_tables(conn, plan, self.refresh, observer)
            record, resumed = self._begin(conn)
            observer(
                "resume" if resumed else "start",
                {"table": config.key, "run": record, "safety_window": self.planner.settings.safety_window},
            )
            try:
                first_sync = self._read(conn, record, resumed)
                if not first_sync:
                    analyze_landed(conn, names)
                record.status = "landed"
                record.ended_at = datetime.now(UTC)
                conn.commit()
                with conn.transaction():
                    # The merge's lock before staging's, in the order the merge takes them.
                    conn.execute(*merge_lock_sql(names.table_key))
                    if self.refresh:
                        rows, replaced = replace_replica(conn, plan, record.run_id)
                        schema_changes.append(f"replica replaced: {rows:,} rows landed, {replaced:,} before")
                    elif first_sync:
                        promote(conn, names, plan.columns, record.run_id)
                    append_event(conn, record)
            except Exception as exc:
                conn.rollback()
                record.status = "failed"
                record.error_message = first_line(exc)
                record.ended_at = datetime.now(UTC)
                append_event(conn, record)
                clear_staging(conn, names)
                drop_first_sync_table(conn, names)
                observer("failed", {"table": config.key, "run": record})
                raise
        observer("landed", {"table": config.key, "run": record})
        return RunResult(
            table=config.key,
            target=names.table_key,
            run_id=record.run_id,
            migration_type=record.migration_type,
            rows_landed=record.rows_landed or 0,
            watermark_used=record.watermark_used,
            watermark_candidate=record.watermark_candidate or "",
            schema_changes=schema_changes,
        )
