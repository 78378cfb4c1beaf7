"""Reports a run's progress while Spark lands its partitions: a thread polls the partition log, so the
console and the run log move as partitions land, and a failure to report cancels the Spark job."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from types import TracebackType
from typing import Any

import psycopg

from extract.config.urls import DatabaseUrl
from extract.core.state_schema import StateSchema
from extract.landing.target_pool import TargetPool
from extract.state.partition_log import Progress, progress

#: Called from the watcher thread with its own connection each time more partitions have landed.
ProgressCallback = Callable[[psycopg.Connection, Progress], None]
POLL_SECONDS = 0.5


@dataclass(frozen=True)
class RunTarget:
    """Where a run lands: the target, the state schema whose partition log marks its partitions, the run."""

    url: DatabaseUrl
    state: StateSchema
    run_id: int
    connections: TargetPool


class ProgressWatch:
    def __init__(self, context: Any, group: str, target: RunTarget, on_progress: ProgressCallback):
        self.context = context
        self.group = group
        self.target = target
        self.run_id = target.run_id
        self.on_progress = on_progress
        self.failures: list[BaseException] = []
        #: The progress last reported (or found at the start).
        self.reported: list[Progress] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, name=f"tidemark-watch-{target.run_id}", daemon=True)

    def __enter__(self) -> ProgressWatch:
        self._thread.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self._stop.set()
        self._thread.join()

    def _watch(self) -> None:
        with self.target.connections.connection(autocommit=True) as conn:
            self.reported.append(progress(conn, self.target.state, self.run_id))
            while not self._stop.wait(POLL_SECONDS):
                if self.failures:
                    # Cancelling reaches only jobs already submitted: repeat until collect() returns.
                    self.context.cancelJobGroup(self.group)
                    continue
                current = progress(conn, self.target.state, self.run_id)
                if current == self.reported[-1]:
                    continue
                self.reported.append(current)
                try:
                    self.on_progress(conn, current)
                except BaseException as exc:  # handed to the main thread, which re-raises it
                    self.failures.append(exc)
                    self.context.cancelJobGroup(self.group)

    def report_the_rest(self) -> None:
        """Report partitions that landed since the watcher last looked (all of them, if the job took less
        than a poll)."""
        if self.failures:
            raise self.failures[0]
        with self.target.connections.connection(autocommit=True) as conn:
            final = progress(conn, self.target.state, self.run_id)
            if not self.reported or final != self.reported[-1]:
                self.on_progress(conn, final)
