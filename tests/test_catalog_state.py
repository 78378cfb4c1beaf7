"""The source catalog read incrementally: only the tables whose definition changed since the marker
(less the prepone window) are described, the others carried from the state; the state, its diff and
the marker are written in one transaction."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from extract.catalog_state.read import CatalogRead
from extract.devtools import server
from tests.conftest import REPO, Project, new_project

TABLES = 1000


@pytest.fixture(scope="module")
def counting_server() -> Iterator[str]:
    """A server of its own that counts the queries reaching it (pg_stat_statements)."""
    base = Path(tempfile.mkdtemp(prefix="tidemark-test-catalog-"))
    os.environ.setdefault("XDG_RUNTIME_DIR", str(base / "runtime"))
    settings = {"shared_preload_libraries": "pg_stat_statements", "pg_stat_statements.track": "all"}
    url = server.start(base / "data", server.free_port(), durable=False, settings=settings)
    yield url
    server.stop(base / "data")
    shutil.rmtree(base, ignore_errors=True)


@pytest.fixture
def catalog(tmp_path: Path, counting_server: str, spark: SparkSession) -> Iterator[Project]:
    with new_project(tmp_path / "project", counting_server, spark) as project:
        project.env["TIDEMARK_CATALOG_PREPONE"] = "0s"
        with project.target() as conn:
            conn.execute("create extension pg_stat_statements")  # not in the source: it would list its views
        with project.source() as conn:
            conn.execute("create schema dbo")
        yield project


def _create_tables(project: Project, count: int) -> None:
    with project.source() as conn, conn.transaction():
        for number in range(count):
            conn.execute(f'create table dbo.t{number:04} (id integer primary key, name text, "ModifiedDate" timestamp)')
    project.write_sync_tables([f"dbo,t{number:04}" for number in range(count)], "source_schema,source_table")


def _read(project: Project, full: bool = False) -> CatalogRead:
    """A catalog read, recorded as a pass records it once its tables are planned."""
    read = project.planner.read_catalog(full)
    project.planner.record_catalog()
    return read


def _column_rows_read(project: Project) -> dict[str, tuple[int, int]]:
    """(calls, rows) of the catalog's column queries that reached the source since the last reset."""
    with project.target() as conn:
        rows = conn.execute(
            """select case when query like '%%tidemark_catalog.objects%%' then 'changed since' else 'one table' end,
            sum(calls)::int, sum(rows)::int from pg_stat_statements as s join pg_database as d on d.oid = s.dbid
            where d.datname = %s and query like '%%from pg_catalog.pg_attribute%%' group by 1""",
            (project.source_db,),
        ).fetchall()
        conn.execute("select pg_stat_statements_reset()")
    return {kind: (calls, rows) for kind, calls, rows in rows}


def test_one_altered_table_of_a_thousand_is_the_only_one_described(catalog: Project) -> None:
    _create_tables(catalog, TABLES)
    _column_rows_read(catalog)
    first = _read(catalog)
    assert first.full and len(first.described) == TABLES
    assert _column_rows_read(catalog) == {"changed since": (1, 3 * TABLES)}
    assert catalog.scalar("select count(*) from _migration.catalog_state") == TABLES
    with catalog.source() as conn:
        conn.execute("alter table dbo.t0042 add column extra numeric(9, 2)")
    second = _read(catalog)
    assert not second.full and second.described == [("dbo", "t0042")]
    assert _column_rows_read(catalog) == {"changed since": (1, 4)}
    assert [(c.table_key, c.describe()) for c in second.changes] == [
        ("dbo.t0042", "column extra added (numeric(9,2) null)")
    ]
    assert [c.name for c in second.tables["dbo.t0042"].columns] == ["id", "name", "ModifiedDate", "extra"]
    assert [c.name for c in second.tables["dbo.t0041"].columns] == ["id", "name", "ModifiedDate"]  # carried
    assert catalog.scalar("select version from _migration.catalog_state where source_table = 't0042'") == 2
    assert catalog.scalar("select count(*) from _migration.catalog_state where version = 1") == TABLES - 1
    third = _read(catalog)
    assert third.described == [] and third.changes == [] and _column_rows_read(catalog) == {}


def test_every_kind_of_change_is_in_the_diff(catalog: Project) -> None:
    _create_tables(catalog, 4)
    _read(catalog)
    with catalog.source() as conn:
        conn.execute('alter table dbo.t0000 drop column "ModifiedDate"')
        conn.execute("alter table dbo.t0001 alter column name type varchar(40)")
        conn.execute("alter table dbo.t0002 rename column name to title")
        conn.execute("alter table dbo.t0003 drop constraint t0003_pkey, add primary key (id, name)")
    read = _read(catalog)
    assert sorted((c.table_key, c.describe()) for c in read.changes) == [
        ("dbo.t0000", "column ModifiedDate dropped (timestamp without time zone null)"),
        ("dbo.t0001", "column name retyped (text null -> character varying(40) null)"),
        ("dbo.t0002", "column name dropped (text null)"),
        ("dbo.t0002", "column title added (text null)"),
        ("dbo.t0003", "column name retyped (text null -> text not null)"),
        ("dbo.t0003", "key changed (id -> id|name)"),
    ]
    with catalog.source() as conn:
        conn.execute("drop table dbo.t0003")
    read = _read(catalog)
    assert [(c.table_key, c.change) for c in read.changes] == [("dbo.t0003", "table_removed")]
    assert "dbo.t0003" not in read.tables
    logged = "select count(*) from _migration.catalog_diff where source_table = 't0003'"
    assert catalog.scalar(logged) == 4  # added, retyped, key changed, removed


def test_a_change_committed_late_is_seen_within_the_prepone_window(catalog: Project) -> None:
    """A DDL is stamped when it runs, not when it commits: a read between the two sees neither, and
    its marker lies after the stamp. Only the prepone window brings the change back into the next read."""
    _create_tables(catalog, 2)
    _read(catalog)
    for prepone, seen in (("1h", True), ("0s", False)):
        catalog.env["TIDEMARK_CATALOG_PREPONE"] = prepone
        catalog.close()
        with catalog.source() as late:
            late.execute("begin")
            late.execute(f"alter table dbo.t0001 add column late_{prepone} integer")
            time.sleep(0.05)
            assert _read(catalog).changes == []
            late.execute("commit")
        changes = _read(catalog).changes
        assert [c.column_name for c in changes] == ([f"late_{prepone}"] if seen else []), prepone
    assert _read(catalog, full=True).changes[0].column_name == "late_0s"  # what 0s missed


def test_a_crash_between_the_state_and_the_marker_misses_nothing(catalog: Project) -> None:
    _create_tables(catalog, 3)
    assert catalog.cli("--all").returncode == 0
    marker = "select marker, catalog_read_id from _migration.catalog_marker"
    before = catalog.scalar("select array_agg(catalog_read_id) from _migration.catalog_state")
    with catalog.source() as conn:
        conn.execute("alter table dbo.t0002 add column added integer")
    with catalog.target() as blocker:
        blocker.execute("begin")
        blocker.execute("lock table _migration.catalog_marker in exclusive mode")  # reads pass, writes wait
        marked = blocker.execute(marker).fetchone()
        env = {**os.environ, **catalog.env, "DBT_PROFILES_DIR": str(catalog.root)}
        process = subprocess.Popen([sys.executable, "-m", "extract", "--all"], cwd=REPO, env=env)
        try:
            _wait_for_marker_write(catalog, process)
        finally:
            os.kill(process.pid, signal.SIGKILL)
            process.wait()
        blocker.execute("commit")
    assert catalog.scalar("select array_agg(catalog_read_id) from _migration.catalog_state") == before
    with catalog.target() as conn:
        assert conn.execute(marker).fetchone() == marked
    catalog.env["TIDEMARK_CATALOG_PREPONE"] = "0s"
    assert [c.column_name for c in _read(catalog).changes] == ["added"]


def _wait_for_marker_write(project: Project, process: subprocess.Popen[bytes]) -> None:
    """Until the process waits for the lock on the marker, having written the state rows before it.
    Asked on a connection of its own: a transaction sees one snapshot of pg_stat_activity."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        assert process.poll() is None, "the sync ended before writing its marker"
        waiting = project.scalar(
            """select count(*) from pg_stat_activity
            where wait_event_type = 'Lock' and query like '%%insert into %%catalog_marker%%'"""
        )
        if waiting:
            return
        time.sleep(0.2)
    raise AssertionError("the sync never reached its marker write")
