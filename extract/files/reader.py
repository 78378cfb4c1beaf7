"""The file source's reader (seed 001's file cursor): the files new or changed since the checkpoint, read
by Spark one task a file and landed through the sync's COPY, each file a partition of the run's plan (its
checkpoint within the run: a resumed run lands only the files it had not). Files that went are deleted
through tombstones when the source says so; without a key, a changed file's rows past its new end too.

Its input state is the registry's (the newest file merged); its output state the newest file it lands.
The checkpoint itself, every file merged, is written by the merge (extract/state/schema.sql)."""

from __future__ import annotations

from dataclasses import dataclass, field

import psycopg

from extract.config.file_sources import FileSource
from extract.core.observer import Note, Observer
from extract.core.sql_contract import FILE_CURSOR_FIELD
from extract.evolution.follow import prepare_tables
from extract.files.batch_checks import files_without_key, keep_newest_rows
from extract.files.checkpoint import FileChanges, count_landed_rows, mark_failed, record_run_files, run_files
from extract.files.diagnosis import where_in_csv
from extract.files.landing import FileFailure, PendingFile, land_files
from extract.files.tombstones import file_tombstones
from extract.landing.clear_landed import awaits_merge, clear_landed_rows, clear_staging
from extract.landing.progress_watch import ProgressCallback, RunTarget
from extract.lifecycle.active_run import ActiveRun
from extract.lifecycle.reader import ReaderKind
from extract.partitions.plan import Partition
from extract.readers.table_reader import RunLogReader
from extract.reconcile.replica_side import ensure_tombstone_table
from extract.state.contract import StreamState
from extract.state.registry import committed_state
from extract.state.run_log import RunRecord

SEGMENT = "files"


@dataclass
class FileSourceReader(RunLogReader):
    observer: Observer
    source: FileSource
    changes: FileChanges
    schema_changes: list[str] = field(default_factory=list)
    failures: list[FileFailure] = field(default_factory=list)
    #: Each file that could not be read, and where and why.
    failed_files: list[str] = field(default_factory=list)

    def prepare(self, conn: psycopg.Connection) -> None:
        self.schema_changes = prepare_tables(conn, self.plan, False, self.observer)
        ensure_tombstone_table(conn, self.plan.names, self.plan.mapped_keys)

    def input_state(self, conn: psycopg.Connection) -> StreamState | None:
        return committed_state(conn, self.state, self.table_key)

    def resume(self, conn: psycopg.Connection, killed: RunRecord, input_state: StreamState | None) -> RunRecord | None:
        if killed.partitions_planned is None or killed.plan_fingerprint != self.plan.fingerprint:
            return None
        killed.error_message = None
        return killed

    def new_run(self, conn: psycopg.Connection, run_id: int, input_state: StreamState | None) -> RunRecord:
        found = self.changes
        what = f"{len(found.land)} file(s) to land, {len(found.same)} the same, {len(found.remove)} removed"
        record = self.run_record(run_id, "incremental", input_state.cursor_value if input_state else None, what)
        record.cursor_column = FILE_CURSOR_FIELD
        record_run_files(conn, self.state, self.table_key, run_id, found)
        newest = max(found.land, key=lambda f: (f[0].mtime, f[0].path), default=None)
        record.watermark_candidate = f"{newest[0].path}#sha256={newest[1]}" if newest else (record.watermark_used or "")
        return record

    def clear(self, conn: psycopg.Connection, keep: tuple[int, list[int]]) -> None:
        clear_staging(conn, self.state, self.plan.names, keep)
        table = (self.plan.names.schema, self.plan.names.tombstone_table)
        clear_landed_rows(conn, table, True, awaits_merge(self.state), (0, ()))

    def read(self, run: ActiveRun[RunRecord]) -> None:
        record = run.record
        files = run_files(run.conn, self.state, self.table_key, record.run_id, "land")
        if not run.resumed:
            run.plan([Partition(i, SEGMENT, None, (path,)) for i, (path, _) in enumerate(files)], None)
        partitions, landed = run.load_plan()
        sizes = dict(files)
        target = self.context.run_target(record.run_id)

        def land(pending: list[Partition], checkpoint: ProgressCallback, fetch_rows: int) -> None:
            # The partitions not landed yet: after a transient failure, fewer than at first.
            chosen = [PendingFile(p.end[0], sizes[p.end[0]], p.number) for p in pending if p.end is not None]
            if chosen:
                failed = [*self.failures, *self._land(chosen, target, checkpoint)]
                self.failures = list({failure.path: failure for failure in failed}.values())

        run.land(partitions, landed, land)
        if self.source.primary_key:
            unkeyed = files_without_key(run.conn, self.plan, self.state, record.run_id)
            self.failures += [FileFailure(path, why, 0) for path, why in unkeyed.items()]
            keep_newest_rows(run.conn, self.plan, self.state, record.run_id)
        self._record_failures(run.conn, record)
        count_landed_rows(run.conn, self.state, self.plan.names, record.run_id)
        file_tombstones(run.conn, self.plan, self.state, record.run_id, self.source.primary_key)

    def _land(self, pending: list[PendingFile], target: RunTarget, checkpoint: ProgressCallback) -> list[FileFailure]:
        staging = (self.plan.names.schema, self.plan.names.staging_table)
        return land_files(self.context.spark, self.source, self.plan.columns, target, staging, pending, checkpoint)

    def _record_failures(self, conn: psycopg.Connection, record: RunRecord) -> None:
        """A file that could not be read leaves the run's files (the next run tries it again), and the
        output state names the newest file that landed."""
        run_id = record.run_id
        for failure in self.failures:
            why = failure.why
            # Record 0: a file refused whole, marked failed already with its rows' removal (files_without_key).
            if failure.record:
                where = where_in_csv(failure.path, self.source, self.plan.columns, failure.record)
                why = f"{where} ({failure.why})" if where else f"record {failure.record}: {failure.why}"
                mark_failed(conn, self.state, self.table_key, run_id, failure.path, why)
            self.failed_files.append(f"{failure.path}: {why}")
            self.observer(Note(self.table, f"error: {failure.path}: {why}; it is read again next run"))
        if self.failures:
            newest = conn.execute(
                self.state.sql(
                    "select path || '#sha256=' || sha256 from {file_log} where table_key = %s and run_id = %s"
                    " and action = 'land' order by modified_ms desc, path desc limit 1"
                ),
                (self.table_key, run_id),
            ).fetchone()
            record.watermark_candidate = newest[0] if newest else (record.watermark_used or "")
        conn.commit()

    def output_state(self, conn: psycopg.Connection, record: RunRecord) -> StreamState:
        return StreamState(
            stream_id=self.table_key,
            cursor_field=FILE_CURSOR_FIELD,
            cursor_value=record.watermark_candidate,
            records_emitted=record.rows_landed or 0,
            reader=ReaderKind.FILES,
        )

    def commit(self, conn: psycopg.Connection, record: RunRecord) -> None:
        return None

    def discard(self, conn: psycopg.Connection, record: RunRecord) -> None:
        self.clear(conn, (0, []))
