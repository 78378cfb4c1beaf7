"""Where a sync's read starts: the changed-rows filter from the committed watermark, and what kind of read
that makes. Reconcile uses the same filter to leave recent changes to the sync."""

from __future__ import annotations

from datetime import datetime

from extract.lifecycle.context import RunContext
from extract.lifecycle.reader import ReaderKind
from extract.partitions.plan import Segment, segments
from extract.planning.table_plan import TablePlan
from extract.source.watermarks import parse_modify_id, parse_watermark


def changed_rows_bound(context: RunContext, plan: TablePlan, watermark_used: str | None) -> datetime | int | None:
    """Where the changed-rows filter starts: the committed watermark less the safety window; a modify id's
    exactly (no transaction in flight can commit below it). None: every row."""
    if plan.cursor is None or not watermark_used:
        return None
    if context.dialect.is_modify_id(plan.cursor):
        return parse_modify_id(watermark_used)
    start_from = parse_watermark(watermark_used) - context.settings.safety_window
    return context.dialect.cursor_lower_bound(start_from, plan.cursor)


def read_segments(context: RunContext, plan: TablePlan, watermark_used: str | None) -> list[Segment]:
    """What a run reads, as segments of rows in their order (changed rows, NULL-cursor rows, or all)."""
    return segments(context.dialect, plan.table, plan.cursor, changed_rows_bound(context, plan, watermark_used))


def reader_kind(context: RunContext, plan: TablePlan, watermark_used: str | None) -> ReaderKind:
    if plan.cursor is None or not watermark_used:
        return ReaderKind.FULL_REFRESH
    return ReaderKind.MODIFY_ID if context.dialect.is_modify_id(plan.cursor) else ReaderKind.CLOCK_WATERMARK
