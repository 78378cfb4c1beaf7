"""`--every DURATION`: sync again and again in one process.

Spark's driver JVM and dbt's parsed project stay in memory between syncs, so each sync after the
first pays only for its own reads, landing and merge: a few seconds less each than a new process.
`kill -USR1` starts a sync at once; `kill -TERM` stops once the sync under way is done.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from datetime import UTC, datetime, timedelta
from types import FrameType

from extract.config.durations import spoken_duration
from extract.core.errors import EXIT_DBT_FAILED, EXIT_TABLE_FAILED, TidemarkError, shown_error
from extract.metrics import Metrics, MetricsServer, metrics_host
from extract.report import Outcome, PassReport, print_report
from extract.run_results import record_report
from extract.sync_pass import SyncPass


class SyncEvery:
    """The --every loop: a sync pass every interval in one process, which keeps Spark and dbt loaded, until SIGTERM."""

    def __init__(self, interval: timedelta, quiet: bool, json_lines: bool, metrics: Metrics | None = None) -> None:
        self.interval = interval.total_seconds()
        self.metrics = metrics
        self.quiet = quiet
        self.json_lines = json_lines
        self._wake = threading.Event()
        self._stopping = False

    def _sync_now(self, signum: int, frame: FrameType | None) -> None:
        self._wake.set()

    def _stop(self, signum: int, frame: FrameType | None) -> None:
        self._stopping = True
        self._wake.set()

    def _say(self, text: str) -> None:
        if not self.quiet:
            print(text, file=sys.stderr, flush=True)

    def run(self, sync_pass: SyncPass) -> int:
        """Sync until SIGTERM; the exit code is the last sync's. A bad configuration found by the first
        sync stops at once; later errors (a source down for a while) are reported and retried."""
        previous = {signum: signal.getsignal(signum) for signum in (signal.SIGUSR1, signal.SIGTERM)}
        signal.signal(signal.SIGUSR1, self._sync_now)
        signal.signal(signal.SIGTERM, self._stop)
        pid = os.getpid()
        self._say(
            f"syncing every {spoken_duration(timedelta(seconds=self.interval))}; `kill -USR1 {pid}` syncs now, "
            f"`kill -TERM {pid}` stops after the sync under way"
        )
        server = None if self.metrics is None else MetricsServer(self.metrics, metrics_host())
        try:
            if server is not None:
                server.start()
                self._say(f"Prometheus metrics at http://{metrics_host()}:{server.port}/metrics")
            return self._loop(sync_pass)
        finally:
            if server is not None:
                server.stop()
            for signum, handler in previous.items():
                signal.signal(signum, handler)

    def _loop(self, sync_pass: SyncPass) -> int:
        number = 0
        while True:
            number += 1
            # Cleared before the sync, not after: a signal during a sync asks for one more.
            self._wake.clear()
            started, started_at = time.monotonic(), datetime.now(UTC)
            outcome = self._one(sync_pass, first=number == 1)
            seconds = time.monotonic() - started
            record_report({"sync": number, **outcome.report.as_json()})
            if self.metrics is not None:
                self.metrics.count_pass(outcome.exit_code)
            if self.json_lines:
                header = {"sync": number, "started_at": started_at.isoformat(), "seconds": round(seconds, 3)}
                print_report({**header, "exit_code": outcome.exit_code, **outcome.report.as_json()}, one_line=True)
            if self._stopping:
                self._say(f"sync {number} took {seconds:.1f}s (exit {outcome.exit_code}); stopping as asked")
                return outcome.exit_code
            ended = None if sync_pass.dbt is None else sync_pass.dbt.ended
            if ended is not None:
                # No later sync could merge: started again (by hand or by a supervisor), it has dbt anew.
                self._say(f"sync {number} took {seconds:.1f}s; {ended}: stopping, start it again to merge")
                return EXIT_DBT_FAILED
            wait = max(0.0, started + self.interval - time.monotonic())
            next_at = (datetime.now() + timedelta(seconds=wait)).strftime("%H:%M:%S")
            self._say(f"sync {number} took {seconds:.1f}s (exit {outcome.exit_code}); next at {next_at}")
            self._wake.wait(wait)
            if self._stopping:
                self._say("stopping as asked")
                return outcome.exit_code

    def _one(self, sync_pass: SyncPass, first: bool) -> Outcome:
        try:
            return sync_pass.run(keep_runtime=True)
        except Exception as exc:  # a loop outlives one failed sync; a bad start is reported at once
            if first:
                raise
            message = shown_error(exc, sync_pass.request.verbose)  # a key value only with --verbose
            print(f"error: {message}", file=sys.stderr, flush=True)
            return Outcome(
                PassReport(error=message), exc.exit_code if isinstance(exc, TidemarkError) else EXIT_TABLE_FAILED
            )
