"""A pass opens its connections once, not once per table or per dbt node: the runs' target connections
(landing/target_pool.py), the driver landing's JDBC connections to both sides (LandingConnections.java)
and dbt's (runtime/dbt_connection_reuse.py) go from one table, or node, to the next. Between two
passes of `--every`, none stays open."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from extract.landing.target_pool import TargetPool
from extract.runtime import dbt_connection_reuse
from tests.conftest import REPO, Project
from tests.small_dbt_project import write_small_project

_TABLE = """
create table dbo.{name} ("Id" integer primary key, "Name" text, "ModifiedDate" timestamp(3));
insert into dbo.{name} select i, 'row ' || i, timestamp '2026-01-01' + i * interval '1 minute'
from generate_series(1, 20) as i
"""


def _tables(project: Project, first: int, count: int) -> None:
    """Tables t{first} to t{first + count - 1} in the source, and every table so far in the seed."""
    with project.source() as conn:
        conn.execute("create schema if not exists dbo")
        for number in range(first, first + count):
            conn.execute(_TABLE.format(name=f"t{number:02}"))
    project.write_sync_tables([f"dbo,t{number:02},ModifiedDate,,true" for number in range(first + count)])
    project.generate()


def _sessions(project: Project) -> dict[str, int]:
    """The sessions the source and target databases have had, once the server has counted those that ended."""
    query = "select datname, sessions from pg_stat_database where datname in (%s, %s)"
    counted: dict[str, int] = {}
    with project.target() as conn:
        for _ in range(50):
            conn.execute("select pg_stat_clear_snapshot()")
            now = {str(name): int(count) for name, count in conn.execute(query, (project.source_db, project.target_db))}
            if now == counted:
                return now
            counted = now
            time.sleep(0.2)
    raise AssertionError(f"the sessions counted did not settle: {counted}")


def _pass_sessions(project: Project) -> dict[str, int]:
    """The sessions a pass (`--all --dbt build`) opened, by database."""
    before = _sessions(project)
    result = project.cli("--all", "--dbt", "build")
    assert result.returncode == 0, result.stderr[-3000:]
    after = _sessions(project)
    return {name: after[name] - before[name] for name in after}


def test_a_pass_opens_as_many_connections_for_20_tables_as_for_4(project: Project) -> None:
    _tables(project, 0, 4)
    four = _pass_sessions(project)
    _tables(project, 4, 20)
    twenty = _pass_sessions(project)  # the first pass of 20 tables, and the 4 checked
    assert project.scalar("select count(*) from _migration.run_log where status = 'landed'") == 24
    # One connection a table, on either side, would be 16 more.
    assert twenty[project.target_db] <= four[project.target_db] + 2, (four, twenty)
    assert twenty[project.source_db] <= four[project.source_db] + 2, (four, twenty)


def test_a_connection_given_back_is_found_as_a_new_one_would_be(project: Project) -> None:
    pool = TargetPool(project.settings.target)
    with project.target() as fresh:
        default_work_mem = fresh.execute("show work_mem").fetchone()
    with pool.connection(autocommit=False) as conn:
        pid = conn.info.backend_pid
        conn.execute("set work_mem = '7MB'")
        conn.execute("create temporary table left_behind (x integer)")
        conn.execute("select pg_advisory_lock(4242)")
        conn.execute("create table left_open (x integer)")  # committed at the end, as psycopg's `with` does
    with pool.connection(autocommit=True) as conn:
        assert conn.info.backend_pid == pid
        assert conn.execute("show work_mem").fetchone() == default_work_mem
        assert conn.execute("select to_regclass('pg_temp.left_behind')").fetchone() == (None,)
    with project.target() as other:
        assert other.execute("select pg_try_advisory_lock(4242)").fetchone() == (True,)
        assert other.execute("select to_regclass('public.left_open') is not null").fetchone() == (True,)

    with pytest.raises(ZeroDivisionError), pool.connection(autocommit=True) as conn:
        failed = conn
        raise ZeroDivisionError
    assert failed.closed  # a block that failed leaves nothing to the next
    with pool.connection(autocommit=True) as conn:
        assert conn.info.backend_pid != pid
        kept = conn
    pool.close()
    assert kept.closed


#: A project of two models on one thread, the second after the first: what the second's session holds.
_MODELS = {
    "dbt_project.yml": "name: reuse\nversion: '1.0.0'\nprofile: small\n",
    "models/first.sql": (
        "{{ config(materialized='table', pre_hook=[\"set work_mem = '7MB'\", "
        "'create temporary table left_behind (x integer)', 'select pg_advisory_lock(4242)']) }}\n"
        "select pg_backend_pid() as pid"
    ),
    "models/second.sql": (
        "{{ config(materialized='table') }}\n"
        "select pg_backend_pid() as pid, current_setting('work_mem') as work_mem,"
        " to_regclass('pg_temp.left_behind') is null as temporary_gone,"
        " not exists (select from pg_locks where locktype = 'advisory' and pid = pg_backend_pid()) as unlocked"
        " from {{ ref('first') }}"
    ),
}


def test_dbt_keeps_its_connection_from_one_node_to_the_next_as_new(project: Project, tmp_path: Path) -> None:
    from dbt.cli.main import dbtRunner

    dbt_connection_reuse.install()
    write_small_project(tmp_path, _MODELS, project.target_url, project.target_db, threads=1)
    with project.target() as fresh:
        default_work_mem = fresh.execute("show work_mem").fetchone()
    args = ["run", "--project-dir", str(tmp_path), "--profiles-dir", str(tmp_path), "--log-path", str(tmp_path)]
    assert dbtRunner().invoke(args).success
    with project.target() as conn:
        first = conn.execute("select pid from s.first").fetchone()
        second = conn.execute("select pid, work_mem, temporary_gone, unlocked from s.second").fetchone()
    # The same server process, with nothing of the first node's session left in it.
    assert second == (first[0], default_work_mem[0], True, True)


def test_between_two_passes_of_every_no_connection_stays_open(project: Project) -> None:
    _tables(project, 0, 3)
    project.close()  # the test's own connections
    env = {**os.environ, **project.env, "DBT_PROFILES_DIR": str(project.root)}
    command = [sys.executable, "-m", "extract", "--all", "--dbt", "build", "--every", "1h"]
    loop = subprocess.Popen(command, env=env, cwd=REPO, stderr=subprocess.PIPE, text=True)
    try:
        assert loop.stderr is not None
        said = next((line for line in iter(loop.stderr.readline, "") if "took" in line or "error" in line), "")
        assert "sync 1 took" in said and "(exit 0)" in said, said
        query = "select datname, application_name, left(query, 60) from pg_stat_activity where datname in (%s, %s)"
        with project.target() as conn:
            for _ in range(50):
                left = conn.execute(query + " and pid <> pg_backend_pid()", (project.source_db, project.target_db))
                open_now = left.fetchall()
                if not open_now:
                    break
                time.sleep(0.2)
        assert not open_now, repr(open_now)
    finally:
        loop.send_signal(signal.SIGTERM)
        loop.wait(timeout=120)
