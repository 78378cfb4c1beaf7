"""The Change Tracking reader: the rows SQL Server's Change Tracking says changed since the input version,
as the table holds them now, and a tombstone for each changed key the table no longer holds.

Its input state is the version its last merged run read; its output state the current version, read
before anything else, so that a change committed later is read next time (reading a key again is
harmless: its row lands as it is then). The reads are separate statements, some in parallel, not one
snapshot: each reads the table as it is when it runs, and a key changed meanwhile has a version above
the output state. A first sync, a backfill or a state of another reader reads every row, from the
version read before it. The table's minimum valid version is checked before the read (the pass read
it for every table at once) and again after it: a cleanup that dropped changes the run needed fails
the run, and nothing it landed is merged.
"""

from __future__ import annotations

from dataclasses import dataclass

import psycopg

from extract.core.errors import LogicalError, TidemarkError
from extract.landing.clear_landed import awaits_merge, clear_landed_rows
from extract.lifecycle.active_run import ActiveRun
from extract.lifecycle.reader import ReaderKind
from extract.partitions.plan import Segment
from extract.readers.changed_rows import ChangedRowsReader
from extract.reconcile.replica_side import ensure_tombstone_table, land_tombstones
from extract.source.change_tracking import (
    changed_rows_relation,
    current_version,
    deleted_keys_query,
    parse_version,
    tracked_since,
    tracked_tables,
    version_text,
)
from extract.state.contract import StreamState
from extract.state.run_log import RunRecord


class ExpiredVersion(TidemarkError):
    """The changes since the input version are no longer all recorded."""

    def __init__(self, table: str, since: int, min_valid: int) -> None:
        self.since, self.min_valid = since, min_valid
        super().__init__(
            f"{table}: Change Tracking no longer holds the changes since version {since} (its minimum valid "
            f"version is {min_valid}: a retention cleanup, a TRUNCATE, or Change Tracking switched off and on); "
            "nothing was applied"
        )


@dataclass
class ChangeTrackingReader(ChangedRowsReader):
    def prepare(self, conn: psycopg.Connection) -> None:
        super().prepare(conn)
        ensure_tombstone_table(conn, self.plan.names, self.plan.mapped_keys)

    def _committed_position(self, state: StreamState | None) -> str | None:
        if state is None or state.reader != ReaderKind.CHANGE_TRACKING:
            return None  # every row, from the version read before them
        return state.cursor_value

    def _since(self, watermark_used: str | None) -> int | None:
        return None if watermark_used is None else parse_version(watermark_used)

    def _segments(self, watermark_used: str | None) -> list[Segment]:
        if watermark_used is None:
            return super()._segments(None)
        return [Segment("changed", tuple(self.plan.source_keys), "")]

    def _relation(self, watermark_used: str | None) -> str:
        since = self._since(watermark_used)
        if since is None:
            return super()._relation(None)
        plan = self.plan
        return changed_rows_relation(self.context.dialect, plan.table, plan.source_keys, since)

    def _read_position(self, record: RunRecord) -> None:
        version = current_version(self.context.source, self.context.dialect)
        since = self._since(record.watermark_used)
        if since is not None and version < since:
            raise LogicalError(
                f"{self.table}: the source's Change Tracking version {version} is below the committed "
                f"{since}; the database was restored or replaced: reset the table's state (tidemark state clear)"
            )
        self._check_valid(since, self.plan.tracked_since)
        record.watermark_candidate = version_text(version)

    def _check_valid(self, since: int | None, min_valid: int | None) -> None:
        if since is None:
            return
        if min_valid is None:
            raise TidemarkError(f"{self.table}: Change Tracking was disabled on the table while it was read")
        if since < min_valid:
            raise ExpiredVersion(self.table, since, min_valid)

    def read(self, run: ActiveRun[RunRecord]) -> None:
        super().read(run)
        since = self._since(run.record.watermark_used)
        if since is None:
            return
        context, plan = self.context, self.plan
        deleted = context.source.query(deleted_keys_query(context.dialect, plan.table, plan.source_keys, since))
        # After the reads: a cleanup meanwhile may have dropped changes they needed.
        self._check_valid(since, tracked_since(tracked_tables(context.source, context.dialect), plan.table))
        keys = [[str(value) for value in key] for key in deleted]
        land_tombstones(run.conn, plan.names, plan.mapped_keys, keys, run.record.run_id)

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
            reader=ReaderKind.CHANGE_TRACKING,
        )

    def discard(self, conn: psycopg.Connection, record: RunRecord) -> None:
        super().discard(conn, record)
        self._clear_tombstones(conn)
