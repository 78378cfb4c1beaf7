"""The Change Tracking reader: the rows SQL Server's Change Tracking says changed since the input version,
as the table holds them now (CHANGETABLE(CHANGES ...) joined to the table), and a tombstone for each
changed key the table no longer holds. Its position is CHANGE_TRACKING_CURRENT_VERSION(), which has no
upper bound in CHANGETABLE: a key changed during the run is read as it is then, and again next time.

The reads are separate statements, some in parallel, not one snapshot (extract/readers/recorded_changes.py
says why that is exact).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from extract.lifecycle.context import RunContext
from extract.lifecycle.reader import ReaderKind
from extract.planning.table_plan import TablePlan
from extract.readers.recorded_changes import RecordedChangesReader
from extract.source.change_tracking import (
    changed_rows_relation,
    current_version,
    deleted_keys_query,
    parse_version,
    version_text,
)
from extract.source.recorded_tables import for_table, tracked_tables


@dataclass
class ChangeTrackingReader(RecordedChangesReader):
    kind: ClassVar[ReaderKind] = ReaderKind.CHANGE_TRACKING
    label: ClassVar[str] = "Change Tracking"

    @classmethod
    def current(cls, context: RunContext, plan: TablePlan) -> int:
        return current_version(context.source, context.dialect)

    @staticmethod
    def text(position: int) -> str:
        return version_text(position)

    @staticmethod
    def parse(text: str) -> int:
        return parse_version(text)

    def oldest_valid(self, since: int, fresh: bool) -> int | None:
        if not fresh:
            return None if self.plan.changes is None else self.plan.changes.min_valid
        return for_table(tracked_tables(self.context.source, self.context.dialect), self.plan.table)

    def changed_rows(self, since: int, upto: int) -> str:
        return changed_rows_relation(self.context.dialect, self.plan.table, self.plan.source_keys, since)

    def deleted_keys(self, since: int, upto: int) -> str:
        return deleted_keys_query(self.context.dialect, self.plan.table, self.plan.source_keys, since)

    def any_change(self, since: int, upto: int) -> str:
        table = self.plan.table
        return f"exists (select 1 from {self.context.dialect.changes_relation(table.schema, table.name, since)})"
