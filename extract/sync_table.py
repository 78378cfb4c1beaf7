"""One sync of one table: its changed rows (or all of them) landed through the run lifecycle."""

from __future__ import annotations

from extract.core.observer import Note, Observer, silent
from extract.lifecycle.context import RunContext
from extract.lifecycle.run import run_stream
from extract.lifecycle.run_result import RunResult
from extract.planning.table_plan import TablePlan
from extract.readers.by_plan import recorded_reader, sync_reader
from extract.readers.reconcile_repairs import reconcile_table
from extract.readers.recorded_changes import ExpiredPosition
from extract.reconcile.result import ReconcileOptions


def sync_table(context: RunContext, plan: TablePlan, observer: Observer = silent, refresh: bool = False) -> RunResult:
    """Land the table's changed rows; with `refresh`, every row, to replace the replica
    (extract/evolution/full_refresh.py)."""
    reader = sync_reader(plan)(context, plan, observer, refresh)
    try:
        record = run_stream(context, reader, observer)
    except ExpiredPosition as expired:
        if context.settings.on_expired_version == "fail":
            raise
        return _recover(context, plan, observer, expired)
    return RunResult.of(plan.config.key, record, reader.schema_changes)


def _recover(context: RunContext, plan: TablePlan, observer: Observer, expired: ExpiredPosition) -> RunResult:
    """A table whose recorded changes expired, brought back by a reconcile: only the rows that differ move,
    and its merge commits the position read before the comparison."""
    reads = recorded_reader(plan)
    assert reads is not None, "only a reader of recorded changes expires"
    restart = reads.text(reads.current(context, plan))
    lost = f"{expired.label}'s changes since {expired.position} expired (the oldest held is {expired.min_valid})"
    reason = f"{lost}: reconciled, to read on from {restart}"
    observer(Note(plan.config.key, f"{lost}: reconciling the table"))
    options = ReconcileOptions(restart_at=restart, restart_reason=reason)
    result = reconcile_table(context, plan, options, observer)
    return RunResult(
        table=plan.config.key,
        target=plan.names.table_key,
        run_id=result.run_id,
        migration_type="reconcile",
        rows_landed=result.rows_landed,
        watermark_used=None if result.input_state is None else str(result.input_state.get("cursor_value")),
        watermark_candidate=restart,
        schema_changes=[],
        input_state=result.input_state,
        output_state=result.output_state,
    )
