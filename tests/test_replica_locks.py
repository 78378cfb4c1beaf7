"""DDL on a replica waits a bounded time behind a reader that keeps its transaction open: the sync gives
up after TIDEMARK_LOCK_ATTEMPTS tries of TIDEMARK_LOCK_TIMEOUT, naming the relation, the reader's pid
and how long its transaction has been open; other readers of the replica are never queued for longer
than the lock timeout meanwhile; once the reader ends, the next sync does what was left."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time

import psycopg
import pytest

from tests.conftest import REPO, Project
from tests.items_fixture import items_table, quoted_replica


@pytest.fixture
def synced(project: Project) -> Project:
    items_table(project, 100)
    project.sync()
    project.env.update({"TIDEMARK_LOCK_TIMEOUT": "1s", "TIDEMARK_LOCK_ATTEMPTS": "2"})
    return project


def _other_readers(project: Project, replica: str, stop: threading.Event, waits: list[float]) -> None:
    """Read the replica again and again while the sync runs, each read's wait recorded."""
    with psycopg.connect(project.target_url, autocommit=True) as conn:
        conn.execute("set statement_timeout = '20s'")
        while not stop.is_set():
            started = time.monotonic()
            conn.execute(f"select count(*) from {replica}")
            waits.append(time.monotonic() - started)
            time.sleep(0.05)


@pytest.mark.parametrize("change", ["added column", "full refresh"])
def test_a_reader_left_open_bounds_the_sync_and_blocks_no_other_reader(synced: Project, change: str) -> None:
    replica = quoted_replica(synced)
    args = ["--table", "dbo.Items"]
    if change == "added column":
        with synced.source() as conn:
            conn.execute('alter table dbo."Items" add column "Extra" integer')
    else:
        args.append("--full-refresh")
    env = {**os.environ, **synced.env, "DBT_PROFILES_DIR": str(synced.root)}
    with psycopg.connect(synced.target_url) as reader:
        reader.execute(f"select count(*) from {replica}").fetchone()  # its transaction stays open
        reader_pid = reader.info.backend_pid
        stop, waits = threading.Event(), []
        others = threading.Thread(target=_other_readers, args=(synced, replica, stop, waits))
        others.start()
        started = time.monotonic()
        done = subprocess.run(
            [sys.executable, "-m", "extract", *args], cwd=REPO, env=env, capture_output=True, text=True, timeout=120
        )
        elapsed = time.monotonic() - started
        stop.set()
        others.join()
    assert done.returncode == 1, done.stderr[-2000:]
    line = next(line for line in done.stderr.splitlines() if "gave up waiting for a lock" in line)
    assert "after 2 attempts of 1s" in line and f"pid {reader_pid} " in line and "open for" in line, line
    assert replica.split(".")[1].strip('"') in line, line
    assert "Traceback" not in done.stderr
    assert elapsed < 30, elapsed
    assert waits and max(waits) < 3, max(waits)  # at most one lock timeout, and some slack

    # With the reader gone, the next sync does it.
    again = synced.cli(*args, "--dbt", "build")
    assert again.returncode == 0, again.stderr[-2000:]
    if change == "added column":
        assert (
            synced.scalar(
                "select count(*) from information_schema.columns where table_name = 'items' and column_name = 'extra'"
            )
            == 1
        )
