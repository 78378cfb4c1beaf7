"""What an extract tells a person while it runs: a progress bar per table on a terminal, lines otherwise."""

from __future__ import annotations

import sys
import threading
import time
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any, TextIO

from tqdm import tqdm

from extract.core.observer import (
    ClockRead,
    Event,
    Failed,
    Landed,
    Note,
    PartitionLanded,
    Planned,
    Retrying,
    RunBegan,
)
from extract.core.sql_contract import FILE_CURSOR_FIELD
from extract.lifecycle.reader import ReaderKind
from extract.state.snapshot_log import SnapshotRecord


def _duration(seconds: float) -> str:
    seconds = max(0, int(seconds))
    return (
        f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"
        if seconds >= 3600
        else (f"{seconds // 60}:{seconds % 60:02d}")
    )


def _of_files(run: Any) -> bool:
    """Whether the run reads a file source (extract/files): its partitions are files."""
    return getattr(run, "cursor_column", None) == FILE_CURSOR_FIELD  # a snapshot's run has no cursor


def _parts(run: Any, partitions: str = "partition(s)") -> str:
    return "file(s)" if _of_files(run) else partitions


#: The readers of SQL Server's own change records: their position is exact, so no safety window is read again.
_RECORDED_BY: dict[str, str] = {ReaderKind.CHANGE_TRACKING: "Change Tracking", ReaderKind.CDC: "CDC"}


def _reading(run: Any, window: timedelta | None) -> str:
    """What a run reads, as its start says it."""
    if _of_files(run):
        return f"files: {run.source_filter}"
    if run.migration_type == "reconcile":
        return "reconcile: comparing the replica with its source"
    recorded_by = _RECORDED_BY.get(str((getattr(run, "input_state", None) or {}).get("reader")))
    if recorded_by and run.watermark_used:
        return f"{run.migration_type} ({recorded_by}); reading the changes recorded since {run.watermark_used}"
    since = "everything"
    if run.watermark_used:
        since = f"changes since {run.watermark_used}" + (f" minus a {window} safety window" if window else "")
    cursor = f"cursor {run.cursor_column}" if run.cursor_column else "no cursor column: full refresh"
    return f"{run.migration_type} ({cursor}); reading {since}"


@dataclass
class _Table:
    started: float = field(default_factory=time.monotonic)
    rows_at_start: int = 0
    bar: tqdm[Any] | None = None


class ConsoleObserver:
    """Thread-safe: `--all` syncs tables at once, and partitions are reported from watcher threads."""

    def __init__(self, quiet: bool = False, stream: TextIO | None = None, bars: bool | None = None) -> None:
        self.quiet = quiet
        # The process's stderr when the observer is made, not when this module was imported: a process
        # that points sys.stderr elsewhere after importing it (a fork, a test's capture) is followed.
        self.stream = sys.stderr if stream is None else stream
        self.bars = self.stream.isatty() if bars is None else bars
        self._tables: dict[str, _Table] = {}
        self._lock = threading.Lock()

    def __call__(self, event: Event) -> None:
        with self._lock:
            self._handle(event)

    def _handle(self, event: Event) -> None:
        match event:
            case RunBegan(table, run, resumed, window) if isinstance(run, SnapshotRecord):
                self._tables[table] = _Table(rows_at_start=run.rows_landed or 0)
                verb = "resuming" if resumed else "landing"
                self._say(f"{table}: run {run.run_id}, {verb} a snapshot as of {run.as_of} from {run.origin}")
            case RunBegan(table, run, True, _):
                self._tables[table] = _Table(rows_at_start=run.rows_landed or 0)
                self._say(
                    f"{table}: resuming run {run.run_id}: {run.partitions_landed} of {run.partitions_planned} "
                    f"{_parts(run)}, {run.rows_landed:,} rows already landed; "
                    f"watermark candidate {run.watermark_candidate}"
                )
                self._open_bar(table, run)
            case RunBegan(table, run, False, window):
                self._tables[table] = _Table()
                self._say(f"{table}: run {run.run_id}, {_reading(run, window)}")
            case Planned(table, run):
                # Rates count from here: a reconcile plans its re-read only once it has compared the table.
                self._tables.setdefault(table, _Table()).started = time.monotonic()
                rows = "all rows" if run.rows_planned is None else f"{run.rows_planned:,} rows"
                how = {"driver": ", without a Spark job (too few rows for one)", "spark": ", by Spark"}.get(
                    run.landed_by or "", ""
                )
                self._say(f"{table}: {rows} to read in {run.partitions_planned} {_parts(run)}{how}")
                self._open_bar(table, run)
            case PartitionLanded(table, run):
                self._partition(table, run)
            case Retrying(table, run, attempt, attempts, wait, error):
                self._say(f"{table}: run {run.run_id} read failed ({error}); retry {attempt} of {attempts} in {wait}")
            case Landed(table, run) if isinstance(run, SnapshotRecord):
                self._landed(table, run, f"{run.target_schema}.{run.target_table}")
                self._say(f"{table}: the snapshot as of {run.as_of} is applied to the as-of history at `dbt build`")
            case Landed(table, run):
                self._landed(table, run, f"{run.target_schema}.stg__{run.target_table}")
                if run.watermark_candidate:
                    said = "newest file" if _of_files(run) else "watermark candidate"
                    self._say(f"{table}: {said} {run.watermark_candidate}")
            case Note(table, text):
                self._say(f"{table}: {text}" if table else text)
            case Failed(table, run):
                self._close_bar(table)
                print(f"{table}: run {run.run_id} failed: {run.error_message}", file=sys.stderr, flush=True)
            case ClockRead():
                pass

    def _open_bar(self, table: str, run: Any) -> None:
        state = self._tables.setdefault(table, _Table())
        if self.quiet or not self.bars or state.bar is not None:
            return
        state.bar = tqdm(
            total=max(run.rows_planned or 0, run.rows_landed or 0),
            initial=run.rows_landed or 0,
            desc=table,
            unit=" rows",
            unit_scale=True,
            file=self.stream,
            dynamic_ncols=True,
            leave=True,
        )
        state.bar.set_postfix_str(f"{run.partitions_landed or 0}/{run.partitions_planned} partitions")

    def _partition(self, table: str, run: Any) -> None:
        state = self._tables.setdefault(table, _Table())
        landed = run.rows_landed or 0
        if state.bar is not None:
            if landed > (state.bar.total or 0):
                state.bar.total = landed
            state.bar.update(landed - state.bar.n)
            state.bar.set_postfix_str(f"{run.partitions_landed}/{run.partitions_planned} partitions")
            return
        took = time.monotonic() - state.started
        rate = (landed - state.rows_at_start) / took if took > 0 else 0.0
        left = max(0, (run.rows_planned or 0) - landed)
        eta = f", ETA {_duration(left / rate)}" if rate > 0 and left else ""
        of_rows = "" if run.rows_planned is None else f" of {run.rows_planned:,}"
        self._say(
            f"{table}: {run.partitions_landed}/{run.partitions_planned} {_parts(run, 'partitions')} landed, "
            f"{landed:,}{of_rows} rows ({rate:,.0f} rows/s{eta})"
        )

    def _landed(self, table: str, run: Any, landing: str) -> None:
        state = self._tables.get(table, _Table())
        if state.bar is not None:
            state.bar.update((run.rows_landed or 0) - state.bar.n)
        self._close_bar(table)
        took = time.monotonic() - state.started
        rate = ((run.rows_landed or 0) - state.rows_at_start) / took if took > 0 else 0.0
        self._say(f"{table}: landed {run.rows_landed:,} rows in {landing} in {took:.1f}s ({rate:,.0f} rows/s)")

    def _close_bar(self, table: str) -> None:
        state = self._tables.get(table)
        if state is not None and state.bar is not None:
            state.bar.close()
            state.bar = None

    def _say(self, text: str) -> None:
        if self.quiet:
            return
        if self.bars:
            tqdm.write(text, file=self.stream)
        else:
            print(text, file=self.stream, flush=True)
