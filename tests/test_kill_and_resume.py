"""kill -9 at random points of real extract and dbt processes loses nothing and duplicates nothing."""

from __future__ import annotations

import os
import random
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from extract.devtools.cdc import enable_table, install_cdc
from extract.devtools.change_tracking import enable_change_tracking, install_change_tracking
from tests.conftest import REPO, Project
from tests.replica_check import assert_replicas_equal

ROWS = 30_000
PARTITION_ROWS = 250  # 120 partitions: landing takes seconds on two cores, time enough to be killed twice
CHANGED_PARTITION_ROWS = 50
PROGRESS = re.compile(r"(\d+)/(\d+) partitions landed")


@pytest.fixture
def big(project: Project) -> Project:
    project.env["PARTITION_ROWS"] = str(PARTITION_ROWS)
    with project.source() as conn:
        conn.execute("create schema dbo")
        conn.execute(
            """create table dbo."Big" ("Id" integer primary key, "Payload" text, "ModifiedDate" timestamp(3))"""
        )
        conn.execute(
            f"""insert into dbo."Big" select i, repeat(md5(i::text), 4), now() - interval '1 day'
            from generate_series(1, {ROWS}) as i"""
        )
    project.write_sync_tables(["dbo,Big,,,true"])
    project.generate()
    return project


def _extract_killed_after(project: Project, reports: int, extra_delay: float) -> bool:
    """Run the extract CLI; kill -9 it at its `reports`-th progress report. True if it finished first."""
    env = {**os.environ, **project.env}
    process = subprocess.Popen(
        [sys.executable, "-m", "extract", "--table", "dbo.Big", "--safety-window", "0s"],
        cwd=REPO,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stderr is not None
    seen, said = 0, []
    for line in process.stderr:
        said.append(line)
        report = PROGRESS.search(line)
        # A report that all partitions landed comes too late: the kill is meant for the landing.
        seen += report is not None and report.group(1) != report.group(2)
        if seen == reports:
            time.sleep(extra_delay)  # somewhere inside the landing of the next partitions
            process.send_signal(signal.SIGKILL)  # a no-op if it has just finished
            break
    code = process.wait()
    assert code in (0, -signal.SIGKILL), "".join(said[-30:])  # failed on its own, not killed
    return code == 0


def landed_partitions(project: Project) -> int:
    return int(project.scalar("select count(*) from _migration.partition_log where landed_at is not null"))


def test_kill_nine_during_extract_and_merge(big: Project) -> None:
    rng = random.Random(20261122)
    kills = 0
    landed = [0]
    status = "running"
    for _ in range(3):
        finished = _extract_killed_after(big, rng.randint(1, 2), rng.uniform(0.0, 0.4))
        kills += not finished
        status = big.scalar("select status from _migration.run_log order by event_id desc limit 1")
        # A kill that comes once the last partitions and the run's 'landed' event committed finds it landed.
        assert (status == "landed") if finished else (status in ("running", "landed"))
        landed.append(landed_partitions(big))
        if status == "landed":
            break
    assert landed == sorted(landed)  # a resumed run keeps what landed before it was killed
    assert kills >= 2, landed
    run_ids = big.scalar("select array_agg(distinct run_id) from _migration.run_log")
    assert len(run_ids) == 1  # every restart resumed the same run
    if status != "landed":
        assert _extract_killed_after(big, 10_000, 0)  # the last one runs to the end
    assert big.scalar("select bool_and(landed_at is not null) from _migration.partition_log")

    # Kill dbt while it merges; the merge is one transaction, so it either committed or left no trace.
    env = {**os.environ, **big.env, "DBT_PROFILES_DIR": str(big.root)}
    dbt = subprocess.Popen(
        [str(Path(sys.executable).with_name("dbt")), "build", "--project-dir", str(big.root)],
        cwd=big.root,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    time.sleep(rng.uniform(3.0, 6.0))
    dbt.send_signal(signal.SIGKILL)
    dbt.wait()
    merges = big.scalar("select count(*) from _migration.merge_log")
    replica_rows = big.scalar(f'select count(*) from "demo__{big.source_db}__dbo".big')
    assert (merges, replica_rows) in {(0, 0), (1, ROWS)}
    big.build()
    assert big.scalar("select rows_inserted from _migration.merge_log") == ROWS
    assert_replicas_equal(big)


@pytest.mark.parametrize("reader", ["change_tracking", "cdc"])
def test_kill_nine_during_a_sync_of_recorded_changes(big: Project, reader: str) -> None:
    """Killed while it lands the changed rows (read by Change Tracking, or from CDC's change rows), then
    changed again: the resumed run and the next sync leave the replica exact."""
    del big.env["PARTITION_ROWS"]
    with big.source() as conn:
        if reader == "cdc":
            install_cdc(conn)
            enable_table(conn, "dbo", "Big")
        else:
            install_change_tracking(conn)
            enable_change_tracking(conn, "dbo", "Big")
    big.close()  # planned again: the reader of the recorded changes reads the table now
    big.sync_replicas()
    assert big.scalar("select reader from _migration.stream_state") == reader
    with big.source() as conn:
        conn.execute("""update dbo."Big" set "Payload" = 'changed' where "Id" % 4 = 0""")  # 7,500 rows
        conn.execute("""delete from dbo."Big" where "Id" % 50 = 5""")
        conn.execute("""insert into dbo."Big" select i, 'new', null from generate_series(40001, 40100) as i""")
    # About 150 partitions of the 7,700 rows changed: their landing lasts past the first report.
    big.env["PARTITION_ROWS"] = str(CHANGED_PARTITION_ROWS)
    # CDC's change rows land faster than Change Tracking's join: killed at its first report, mid-landing.
    assert not _extract_killed_after(big, 1, 0.0 if reader == "cdc" else 0.2)
    killed = big.scalar("select max(run_id) from _migration.run_log")
    with big.source() as conn:  # while it lies killed: rows of landed partitions and of pending ones change
        conn.execute("""update dbo."Big" set "Payload" = 'again' where "Id" % 97 = 1""")
        conn.execute("""delete from dbo."Big" where "Id" % 89 = 3""")
    assert _extract_killed_after(big, 10_000, 0)
    assert big.scalar("select max(run_id) from _migration.run_log") == killed  # resumed, not begun anew
    big.merge()
    big.extract()
    big.merge()
    assert_replicas_equal(big)
