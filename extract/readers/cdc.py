"""The CDC reader: from a capture instance's change rows in (input LSN, max LSN], the last image of each
key (by LSN, then sequence, then operation): an insert's or an update's row lands as it was captured; a
delete, or the before-image of an update that moved the key away, lands as a tombstone. Every read of
the run asks the same LSN range, so they see one set of changes.

A capture instance made with a column list (@captured_column_list) holds only those columns: a run
reading one that lacks a column it lands takes the changed keys from it, and their rows from the table
as it is now, as Change Tracking's are; its deletes stay exact.

A table has at most two capture instances, the second made to follow a schema change, whose columns
the first may lack. A run reads the newest instance that began at or before its first LSN. When a newer
one began after that, the run reads up to where it begins, and only the keys from the older one: their
rows come from the table as it is now (as Change Tracking's do). The next run goes on with the newer one.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar

from extract.lifecycle.context import RunContext
from extract.lifecycle.reader import ReaderKind
from extract.planning.table_plan import TablePlan
from extract.readers.recorded_changes import RecordedChangesReader
from extract.source import cdc
from extract.source.changed_keys import keys_gone, rows_of_keys
from extract.source.recorded_tables import CaptureInstance, capture_instances, for_table
from extract.state.run_log import RunRecord


def instance_for(instances: tuple[CaptureInstance, ...], since: int) -> tuple[CaptureInstance, int | None]:
    """The capture instance a run after LSN `since` reads, and the start of the newer one it must stop
    before (None: it reads up to the highest LSN)."""
    begun = [i for i in instances if i.start_lsn <= since + 1] or [instances[0]]
    newer = [i for i in instances if i.start_lsn > begun[-1].start_lsn]
    return begun[-1], (newer[0].start_lsn if newer else None)


@dataclass
class CdcReader(RecordedChangesReader):
    kind: ClassVar[ReaderKind] = ReaderKind.CDC
    label: ClassVar[str] = "CDC"

    @classmethod
    def current(cls, context: RunContext, plan: TablePlan) -> int:
        return cdc.max_lsn(context.source, context.dialect)

    @staticmethod
    def text(position: int) -> str:
        return cdc.lsn_text(position)

    @staticmethod
    def parse(text: str) -> int:
        return cdc.parse_lsn(text)

    def _instances(self, fresh: bool) -> tuple[CaptureInstance, ...]:
        if not fresh:
            return () if self.plan.changes is None else self.plan.changes.instances
        return for_table(capture_instances(self.context.source, self.context.dialect), self.plan.table) or ()

    def oldest_valid(self, since: int, fresh: bool) -> int | None:
        instances = self._instances(fresh)
        # The first LSN read is since + 1: it must still be held.
        return instance_for(instances, since)[0].min_lsn - 1 if instances else None

    def _read_position(self, record: RunRecord) -> None:
        super()._read_position(record)
        if record.watermark_used is not None:
            stop = instance_for(self._instances(False), self.parse(record.watermark_used))[1]
            if stop is not None and stop - 1 < self.parse(record.watermark_candidate or ""):
                record.watermark_candidate = self.text(stop - 1)  # the next run reads the newer instance

    def _source(self, since: int, upto: int) -> tuple[CaptureInstance, bool]:
        """The capture instance read, and whether a newer one begins after `since` (the run's last)."""
        instance, stop = instance_for(self._instances(False), since)
        return instance, stop is not None

    def _query(self, since: int, upto: int, of_keys: Callable[..., str], of_images: Callable[..., str]) -> str:
        """`of_images` over the change rows' last images; when a newer instance supersedes the one read, or
        the one read captures only some of the columns the run lands, `of_keys` over the table's rows of
        the changed keys."""
        instance, superseded = self._source(since, upto)
        dialect, plan = self.context.dialect, self.plan
        if superseded or not instance.captures(column.source.name for column in plan.columns):
            keys = cdc.changed_keys(dialect, instance.name, plan.source_keys, since, upto)
            return of_keys(dialect, plan.table, plan.source_keys, keys)
        return of_images(dialect, instance.name, plan.source_keys, since, upto)

    def changed_rows(self, since: int, upto: int) -> str:
        return self._query(since, upto, rows_of_keys, cdc.changed_rows_relation)

    def deleted_keys(self, since: int, upto: int) -> str:
        return self._query(since, upto, keys_gone, cdc.deleted_keys_query)

    def any_change(self, since: int, upto: int) -> str:
        instance, _ = self._source(since, upto)
        return f"exists (select 1 from {self.context.dialect.cdc_changes(instance.name, since, upto)} as c)"
