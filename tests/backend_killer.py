"""Killing the source's backend while a run reads a partition: the transient failure retries are for."""

from __future__ import annotations

import threading
import time

import psycopg

from extract.core.observer import Event, Planned
from tests.conftest import Project


class BackendKiller:
    """Once the run planned, locks the source table so that its partition reads wait on the lock, and
    terminates each waiting reader's backend, `kills` times; then lets the reads through."""

    def __init__(self, project: Project, kills: int) -> None:
        self.project, self.kills, self.killed = project, kills, 0
        self._thread: threading.Thread | None = None
        self._locked = threading.Event()

    def __call__(self, event: Event) -> None:
        if isinstance(event, Planned) and self._thread is None:
            self._thread = threading.Thread(target=self._run, daemon=True)
            self._thread.start()
            self._locked.wait(10)

    def _run(self) -> None:
        with psycopg.connect(self.project.source_url) as holder, self.project.source() as watcher:
            holder.execute('lock table dbo."Items" in access exclusive mode')
            self._locked.set()
            deadline = time.monotonic() + 60  # a run that never reads lets the lock go then
            while self.killed < self.kills and time.monotonic() < deadline:
                rows = watcher.execute(
                    "select pid from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'"
                    " and pid <> %s",
                    (holder.info.backend_pid,),
                ).fetchall()
                for (pid,) in rows:
                    watcher.execute("select pg_terminate_backend(%s)", (pid,))
                    self.killed += 1
                threading.Event().wait(0.05)
            holder.rollback()

    def join(self) -> None:
        assert self._thread is not None, "the run never planned"
        self._thread.join(30)
