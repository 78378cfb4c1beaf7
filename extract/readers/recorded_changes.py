"""What the readers of the changes a source records itself have in common (SQL Server's Change Tracking,
extract/readers/change_tracking.py, and CDC, extract/readers/cdc.py): the rows of the keys changed since
the input position and a tombstone for each changed key gone, landed through the sync's landing.

Its input state is the position its last merged run read up to; its output state the source's position
read before anything else, so that a change committed later is read next time (reading a key again is
harmless: it lands as it is then). A first sync, a backfill or a state of another reader reads every
row, from the position read before it. The position must still be valid (its changes not cleaned up):
checked before the read, from what the pass read for every table at once, and again after it, so that
a cleanup meanwhile fails the run, and nothing it landed is merged.
"""

from __future__ import annotations

from abc import abstractmethod
from dataclasses import dataclass
from typing import ClassVar

import psycopg

from extract.core.errors import LogicalError, TidemarkError
from extract.landing.clear_landed import awaits_merge, clear_landed_rows
from extract.lifecycle.active_run import ActiveRun
from extract.lifecycle.context import RunContext
from extract.lifecycle.reader import ReaderKind
from extract.partitions.plan import Segment
from extract.planning.table_plan import TablePlan
from extract.readers.changed_rows import ChangedRowsReader
from extract.reconcile.replica_side import ensure_tombstone_table, land_tombstones
from extract.state.contract import StreamState
from extract.state.run_log import RunRecord


class ExpiredPosition(TidemarkError):
    """The changes since the input position are no longer all recorded."""

    def __init__(self, table: str, label: str, position: str, min_valid: str) -> None:
        self.label, self.position, self.min_valid = label, position, min_valid
        super().__init__(
            f"{table}: {label} no longer holds the changes since {position} (the oldest it holds is "
            f"{min_valid}: a cleanup of old changes, a TRUNCATE, or {label} switched off and on); "
            "nothing was applied"
        )


@dataclass
class RecordedChangesReader(ChangedRowsReader):
    kind: ClassVar[ReaderKind]
    #: What the source calls its record, in messages.
    label: ClassVar[str]

    @classmethod
    @abstractmethod
    def current(cls, context: RunContext, plan: TablePlan) -> int:
        """The source's position now: every change at or below it is recorded (and no later one will be)."""

    @staticmethod
    @abstractmethod
    def text(position: int) -> str:
        """A position as the state keeps it."""

    @staticmethod
    @abstractmethod
    def parse(text: str) -> int: ...

    @abstractmethod
    def oldest_valid(self, since: int, fresh: bool) -> int | None:
        """The lowest input position whose changes are all still recorded, as the pass found it or (`fresh`)
        as the source says now; None when the source no longer records the table's changes."""

    @abstractmethod
    def changed_rows(self, since: int, upto: int) -> str:
        """The rows of the keys changed after `since` (up to `upto`), as a relation with the table's columns."""

    @abstractmethod
    def deleted_keys(self, since: int, upto: int) -> str:
        """The query of the keys changed after `since` (up to `upto`) that are gone, as replica text."""

    @abstractmethod
    def any_change(self, since: int, upto: int) -> str:
        """An EXISTS that is true when a key changed after `since` (up to `upto`): a pass's check."""

    def prepare(self, conn: psycopg.Connection) -> None:
        super().prepare(conn)
        ensure_tombstone_table(conn, self.plan.names, self.plan.mapped_keys)

    def _committed_position(self, state: StreamState | None) -> str | None:
        if state is None or state.reader != self.kind:
            return None  # every row, from the position read before them
        return state.cursor_value

    def _segments(self, watermark_used: str | None) -> list[Segment]:
        if watermark_used is None:
            return super()._segments(None)
        return [Segment("changed", tuple(self.plan.source_keys), "")]

    def _range(self, record: RunRecord) -> tuple[int, int] | None:
        if record.watermark_used is None:
            return None
        return self.parse(record.watermark_used), self.parse(record.watermark_candidate or "")

    def _relation(self, record: RunRecord) -> str:
        read = self._range(record)
        return super()._relation(record) if read is None else self.changed_rows(*read)

    def _read_position(self, record: RunRecord) -> None:
        now = self.current(self.context, self.plan)
        record.watermark_candidate = self.text(now)
        read = self._range(record)
        if read is None:
            return
        since = read[0]
        if now < since:
            raise LogicalError(
                f"{self.table}: the source reads {self.text(now)}, below the committed {self.text(since)}; the "
                "database was restored or replaced: reset the table's state (tidemark state reset)"
            )
        self._check_valid(since, fresh=False)

    def _check_valid(self, since: int, fresh: bool) -> None:
        oldest = self.oldest_valid(since, fresh)
        if oldest is None:
            raise TidemarkError(f"{self.table}: {self.label} stopped recording the table's changes while it was read")
        if since < oldest:
            raise ExpiredPosition(self.table, self.label, self.text(since), self.text(oldest))

    def read(self, run: ActiveRun[RunRecord]) -> None:
        super().read(run)
        read = self._range(run.record)
        if read is None:
            return
        deleted = self.context.source.query(self.deleted_keys(*read))
        # After the reads: a cleanup meanwhile may have dropped changes they needed.
        self._check_valid(read[0], fresh=True)
        keys = [[str(value) for value in key] for key in deleted]
        land_tombstones(run.conn, self.plan.names, self.plan.mapped_keys, keys, run.record.run_id)

    def clear(self, conn: psycopg.Connection, keep: tuple[int, list[int]]) -> None:
        super().clear(conn, keep)
        self._clear_tombstones(conn)

    def _clear_tombstones(self, conn: psycopg.Connection) -> None:
        """The tombstones no merge will take (a resumed run lands its own again)."""
        table = (self.plan.names.schema, self.plan.names.tombstone_table)
        clear_landed_rows(conn, table, True, awaits_merge(self.state), (0, ()))

    def output_state(self, conn: psycopg.Connection, record: RunRecord) -> StreamState:
        return StreamState(
            stream_id=self.table_key,
            cursor_field=None,
            cursor_value=record.watermark_candidate,
            records_emitted=record.rows_landed or 0,
            reader=self.kind,
        )

    def discard(self, conn: psycopg.Connection, record: RunRecord) -> None:
        super().discard(conn, record)
        self._clear_tombstones(conn)
