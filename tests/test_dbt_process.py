"""`--dbt`'s dbt runs in a process of the pass's own: it ends with the pass, even one killed with SIGKILL,
and a pass whose dbt process is killed fails as a dbt failure (exit 5), naming why; what landed is merged
by the next pass, exactly."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import psycopg
import pytest

from tests.conftest import REPO, Project
from tests.items_fixture import items_table, quoted_replica
from tests.replica_check import assert_replicas_equal
from tests.test_every import Loop

_WAITING = """
select count(*) from pg_locks
where not granted and relation = %s::regclass
"""


@pytest.fixture
def synced(project: Project) -> Project:
    items_table(project, 100)
    project.sync()
    with project.source() as conn:
        conn.execute(
            """update dbo."Items" set "Name" = 'renamed', "ModifiedDate" = clock_timestamp() where "Id" <= 10"""
        )
    # The merge waits for the test's lock on the replica for as long as the test holds it.
    project.env.update({"TIDEMARK_LOCK_TIMEOUT": "120s", "TIDEMARK_LOCK_ATTEMPTS": "1"})
    return project


@contextmanager
def _merge_held(project: Project) -> Iterator[tuple[subprocess.Popen[str], int]]:
    """A pass started with `--dbt build`, held in its merge by a lock on the replica until the block ends;
    the pass's process and its dbt process."""
    replica = quoted_replica(project)
    env = {**os.environ, **project.env, "DBT_PROFILES_DIR": str(project.root)}
    with psycopg.connect(project.target_url) as holder:
        holder.execute(f"lock table {replica} in access exclusive mode")
        process = subprocess.Popen(
            [sys.executable, "-m", "extract", "--all", "--dbt", "build"],
            cwd=REPO,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            _wait_for(lambda: _waiting(project, replica), "the merge to wait for the replica's lock", process)
            yield process, _dbt_process(process.pid)
        finally:
            if process.poll() is None:
                process.kill()
            process.wait()


def _waiting(project: Project, replica: str) -> bool:
    with psycopg.connect(project.target_url, autocommit=True) as conn:
        row = conn.execute(_WAITING, (replica,)).fetchone()
    return bool(row and row[0])


def _dbt_process(pid: int) -> int:
    """The pass's dbt process: its one child forked from it (the JVMs it starts run other programs)."""
    children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    command = Path(f"/proc/{pid}/cmdline").read_bytes()
    [dbt] = [int(child) for child in children if Path(f"/proc/{child}/cmdline").read_bytes() == command]
    return dbt


def _alive(pid: int) -> bool:
    """Whether `pid` runs (a zombie, dead but not reaped by its parent, does not)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state != "Z"


def _wait_for(condition: Callable[[], bool], what: str, process: subprocess.Popen[str] | None = None) -> None:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if condition():
            return
        if process is not None and process.poll() is not None:
            _, stderr = process.communicate()
            raise AssertionError(f"the pass ended ({process.returncode}) before {what}: {stderr[-3000:]}")
        time.sleep(0.1)
    raise AssertionError(f"waited 120 s for {what}")


def test_a_pass_killed_with_sigkill_takes_its_dbt_process_with_it(synced: Project) -> None:
    with _merge_held(synced) as (process, dbt):
        assert _alive(dbt)
        process.send_signal(signal.SIGKILL)
        assert process.wait() == -signal.SIGKILL
        _wait_for(lambda: not _alive(dbt), "dbt's process to end")
    done = synced.cli("--all", "--dbt", "build")
    assert done.returncode == 0, done.stderr[-3000:]
    assert_replicas_equal(synced)


def test_a_pass_whose_dbt_process_is_killed_fails_as_dbt_and_the_next_merges(synced: Project) -> None:
    with _merge_held(synced) as (process, dbt):
        os.kill(dbt, signal.SIGKILL)
        _, stderr = process.communicate(timeout=120)
    assert process.returncode == 5, stderr[-3000:]
    assert "dbt's process ended before it answered (killed by signal 9)" in stderr, stderr[-3000:]
    assert "what landed waits for the next merge" in stderr
    assert "Traceback" not in stderr
    done = synced.cli("--all", "--dbt", "build")
    assert done.returncode == 0, done.stderr[-3000:]
    assert_replicas_equal(synced)


def test_an_every_process_whose_dbt_process_ended_stops_to_be_started_again(synced: Project, tmp_path: Path) -> None:
    """No later sync of the process could merge: it stops with exit 5, saying why, for its supervisor to
    start it again."""
    log = tmp_path / "every.log"
    loop = Loop(synced, log, "--all", "--dbt", "build", "--every", "1h", "--json")
    try:
        first = loop.next_sync()
        assert first["exit_code"] == 0, log.read_text()[-3000:]
        os.kill(_dbt_process(loop.process.pid), signal.SIGKILL)
        with synced.source() as conn:
            conn.execute(
                """update dbo."Items" set "Name" = 'again', "ModifiedDate" = clock_timestamp() where "Id" = 1"""
            )
        loop.signal(signal.SIGUSR1)
        second = loop.next_sync()
        assert loop.process.wait(timeout=120) == 5, log.read_text()[-3000:]
    finally:
        if loop.process.poll() is None:
            loop.stop()
    assert second["exit_code"] == 5
    said = log.read_text()
    assert "dbt's process ended before it answered (killed by signal 9): stopping, start it again to merge" in said
    done = synced.cli("--all", "--dbt", "build")
    assert done.returncode == 0, done.stderr[-3000:]
    assert_replicas_equal(synced)
