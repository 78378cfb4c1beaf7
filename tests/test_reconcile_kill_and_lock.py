"""A reconcile killed with SIGKILL at random moments finishes on the next run with an exact replica and
deletes nothing it should not; a sync and a reconcile of one table never run at once."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time

import pytest

from tests.conftest import REPO, Project
from tests.replica_check import assert_replicas_equal

ROWS = 40_000


@pytest.fixture
def drifted(project: Project) -> Project:
    """A synced table whose source then deleted, inserted and changed rows behind its watermark."""
    project.env["PARTITION_ROWS"] = "5000"  # the re-read of changed keys runs as Spark tasks too
    with project.source() as conn:
        conn.execute("create schema dbo")
        conn.execute(
            """create table dbo."Big" ("Id" bigint primary key, "Payload" text, "ModifiedDate" timestamp(3))"""
        )
        conn.execute(
            f"""insert into dbo."Big" select i, repeat(md5(i::text), 3), timestamp '2026-01-01'
            from generate_series(1, {ROWS}) as i"""
        )
    project.write_sync_tables(["dbo,Big,ModifiedDate,,true"])
    project.generate()
    project.sync_replicas()
    with project.source() as conn:
        conn.execute("""delete from dbo."Big" where "Id" % 97 = 0""")
        conn.execute("""update dbo."Big" set "Payload" = 'restored' where "Id" % 89 = 0""")
        conn.execute(
            """insert into dbo."Big" select i, 'late', timestamp '2026-01-01' from generate_series(50001, 50500) i"""
        )
    return project


def _start(project: Project, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "extract", *args],
        cwd=REPO,
        env={**os.environ, **project.env, "DBT_PROFILES_DIR": str(project.root)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )


def _deleted_keys_are_gone_from_the_source(project: Project) -> None:
    with project.target() as conn:
        deleted = [int(r[0]) for r in conn.execute("select key ->> 'id' from _migration.delete_log").fetchall()]
    with project.source() as conn:
        still_there = conn.execute('select count(*) from dbo."Big" where "Id" = any(%s)', (deleted,)).fetchone()
    assert deleted and still_there == (0,)


def test_a_killed_reconcile_finishes_on_the_next_run(drifted: Project) -> None:
    rng = random.Random(20261124)
    for _ in range(4):
        process = _start(drifted, "reconcile", "--table", "dbo.Big", "--dbt", "build")
        time.sleep(rng.uniform(2.0, 9.0))  # start-up, comparison, landing or merge
        process.send_signal(signal.SIGKILL)
        process.wait()
    done = drifted.cli("reconcile", "--table", "dbo.Big", "--dbt", "build")
    assert done.returncode == 0, done.stderr[-3000:]
    assert_replicas_equal(drifted)
    _deleted_keys_are_gone_from_the_source(drifted)
    again = drifted.cli("reconcile", "--table", "dbo.Big", "--json")
    assert '"status": "exact"' in again.stdout, again.stdout[-2000:]


def test_a_sync_and_a_reconcile_of_one_table_never_overlap(drifted: Project) -> None:
    with drifted.source() as conn:
        conn.execute(
            """update dbo."Big" set "Payload" = 'fresh',
            "ModifiedDate" = cast(clock_timestamp() at time zone 'UTC' as timestamp(3)) where "Id" % 101 = 0"""
        )
    reconcile = _start(drifted, "reconcile", "--table", "dbo.Big")
    sync = _start(drifted, "--table", "dbo.Big")
    outcomes = []
    for process in (reconcile, sync):
        _, err = process.communicate(timeout=600)
        outcomes.append((process.returncode, err))
    for code, err in outcomes:
        # Refused (the other holds the table's lock, or the sync's run waits for a merge), or it ran.
        assert code == 0 or (code == 1 and ("is running" in err or "wait for a merge" in err)), err[-2000:]
    # Whatever ran, a merge, a sync and a reconcile leave the replica exact.
    drifted.merge()
    drifted.sync_replicas()
    done = drifted.cli("reconcile", "--table", "dbo.Big", "--dbt", "run")
    assert done.returncode == 0, done.stderr[-3000:]
    assert_replicas_equal(drifted)
    _deleted_keys_are_gone_from_the_source(drifted)
