"""The reader class a sync of a table uses, by its plan."""

from __future__ import annotations

from extract.lifecycle.reader import ReaderKind
from extract.planning.table_plan import TablePlan
from extract.readers.cdc import CdcReader
from extract.readers.change_tracking import ChangeTrackingReader
from extract.readers.changed_rows import ChangedRowsReader
from extract.readers.recorded_changes import RecordedChangesReader

_RECORDED: dict[str, type[RecordedChangesReader]] = {
    ReaderKind.CHANGE_TRACKING: ChangeTrackingReader,
    ReaderKind.CDC: CdcReader,
}


def recorded_reader(plan: TablePlan) -> type[RecordedChangesReader] | None:
    """The reader of the changes the source records of the table itself, if one reads it."""
    return None if plan.changes is None else _RECORDED[plan.changes.reader]


def sync_reader(plan: TablePlan) -> type[ChangedRowsReader]:
    return recorded_reader(plan) or ChangedRowsReader
