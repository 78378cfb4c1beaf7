"""What an extract tells a person at a terminal while it runs."""

from __future__ import annotations

import sys
import time
from typing import Any, TextIO


class ConsoleObserver:
    def __init__(self, quiet: bool = False, stream: TextIO = sys.stdout) -> None:
        self.quiet = quiet
        self.stream = stream
        self._started: dict[str, float] = {}

    def __call__(self, event: str, details: dict[str, Any]) -> None:
        table = details["table"]
        run = details["run"]
        if event == "resume":
            self._started[table] = time.monotonic()
            self._say(
                f"{table}: resuming run {run.run_id} after page {run.pages_landed} "
                f"({run.rows_landed:,} rows already landed); watermark candidate {run.watermark_candidate}"
            )
        elif event == "start":
            self._started[table] = time.monotonic()
            since = "everything"
            if run.watermark_used:
                window = details.get("safety_window")
                since = f"changes since {run.watermark_used}" + (f" minus a {window} safety window" if window else "")
            cursor = f"cursor {run.cursor_column}" if run.cursor_column else "no cursor column: full refresh"
            self._say(f"{table}: run {run.run_id}, {run.migration_type} ({cursor}); reading {since}")
        elif event == "page" and run.pages_landed > 1:
            self._say(f"{table}: page {run.pages_landed} landed, {run.rows_landed:,} rows so far")
        elif event == "landed":
            took = time.monotonic() - self._started.get(table, time.monotonic())
            rate = (run.rows_landed or 0) / took if took > 0 else 0.0
            self._say(
                f"{table}: landed {run.rows_landed} rows in {run.target_schema}.stg__{run.target_table} "
                f"in {took:.1f}s ({rate:,.0f} rows/s); watermark candidate {run.watermark_candidate}"
            )
        elif event == "failed":
            print(f"{table}: run {run.run_id} failed: {run.error_message}", file=sys.stderr)

    def _say(self, text: str) -> None:
        if not self.quiet:
            print(text, file=self.stream, flush=True)
