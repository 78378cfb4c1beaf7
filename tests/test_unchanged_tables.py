"""A pass asks the source whether a table has anything to read before running it. A table with nothing
lands no run and needs no merge, its state stays, and its next run reads from the same watermark; a
table without a cursor, or whose definition changed, runs as before."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from tests.conftest import REPO, Project
from tests.demo_fixture import demo
from tests.items_fixture import items_table
from tests.replica_check import assert_replicas_equal
from tests.test_every import Loop

__all__ = ["demo"]


def _pass(project: Project, *args: str) -> dict[str, Any]:
    done = project.cli("--all", "--dbt", "build", "--json", *args)
    assert done.returncode == 0, done.stderr[-3000:]
    report: dict[str, Any] = json.loads(done.stdout)
    return report


def _statuses(report: dict[str, Any]) -> dict[str, str]:
    return {entry["table"]: entry["status"] for entry in report["tables"]}


def _versions(project: Project) -> dict[str, int]:
    with project.target() as conn:
        return dict(conn.execute("select table_key, version from _migration.stream_state").fetchall())


def test_a_table_with_nothing_to_read_lands_no_run_and_is_read_from_its_watermark_later(demo: Project) -> None:
    assert set(_statuses(_pass(demo)).values()) == {"landed"}
    versions, last_event = _versions(demo), demo.scalar("select max(event_id) from _migration.run_log")

    quiet = _pass(demo)
    statuses = _statuses(quiet)
    assert statuses["dbo.Customers"] == statuses["dbo.Products"] == "unchanged", statuses
    assert statuses["dbo.Countries"] == "landed"  # no cursor: read whole every time
    with demo.source() as conn:  # rows of NULL cursor, which every run reads, are compared with the replica
        nulls = {
            table: conn.execute(f'select count(*) from dbo."{table}" where "{cursor}" is null').fetchone()[0]  # type: ignore[index]
            for table, cursor in (("Orders", "UpdatedAt"), ("OrderLines", "ModifiedDate"))
        }
    assert all(nulls.values()), nulls
    assert statuses["dbo.Orders"] == statuses["dbo.OrderLines"] == "unchanged", statuses
    unchanged = [entry for entry in quiet["tables"] if entry["status"] == "unchanged"]
    assert all(entry["watermark"] and entry["checked_through"] > entry["watermark"] for entry in unchanged)
    # No run, no new state version; the check is kept for the freshness.
    logged = demo.scalar(
        "select count(*) from _migration.run_log where event_id > %s and table_key = any(%s)",
        (last_event, [entry["target"] for entry in unchanged]),
    )
    assert logged == 0
    after = _versions(demo)
    assert all(after[entry["target"]] == versions[entry["target"]] for entry in unchanged)
    checked = demo.scalar("select count(*) from _migration.stream_checks")
    assert checked == len(unchanged)
    fresh = demo.scalar(
        "select count(*) from _migration.freshness as f join _migration.stream_checks as c using (table_key)"
        " where f.fresh_as_of = c.checked_at"
    )
    assert fresh == len(unchanged)

    # A row stamped at the committed watermark, before the check's clock reading, committed after the
    # check: the watermark did not move, so the next pass reads it.
    (customers,) = [entry for entry in unchanged if entry["table"] == "dbo.Customers"]
    with demo.source() as conn:
        conn.execute(
            """update dbo."Customers" set "Email" = 'late@example.com', "ModifiedDate" = %s where "CustomerID" = 7""",
            (customers["watermark"],),
        )
    late = _pass(demo)
    assert _statuses(late)["dbo.Customers"] == "landed"
    assert _statuses(late)["dbo.Products"] == "unchanged"
    assert_replicas_equal(demo)

    # A column added in the source: the catalog read sees it, and the table runs to follow it.
    with demo.source() as conn:
        conn.execute('alter table dbo."Products" add column "Colour" varchar(20)')
    followed = _pass(demo)
    assert _statuses(followed)["dbo.Products"] == "landed"
    assert_replicas_equal(demo)
    assert _statuses(_pass(demo))["dbo.Products"] == "unchanged"


def test_a_pass_with_nothing_to_read_starts_no_spark(project: Project) -> None:
    """The checks go through the source's JVM, without Spark: with a Spark that cannot start (no such
    SPARK_HOME), a pass that finds nothing to read succeeds, and so does one of a small batch, which lands
    in that JVM; one whose batch Spark reads fails on Spark. Nor does a pass with nothing to read import
    pyspark: it takes a fresh process half a second or more (that pass runs in a process of its own: a
    fork of the test worker has it imported)."""
    items_table(project, 50, stamped="clock_timestamp()")
    assert _statuses(_pass(project)) == {"dbo.Items": "landed"}

    project.env["SPARK_HOME"] = "/nonexistent/spark"
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "extract", "--all", "--dbt", "build", "--json"],
        cwd=REPO,
        env={**os.environ, **project.env, "DBT_PROFILES_DIR": str(project.root)},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert _statuses(json.loads(done.stdout)) == {"dbo.Items": "unchanged"}
    imported = {line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines() if line.startswith("import time:")}
    assert "extract.sync_pass" in imported
    assert sorted(name for name in imported if name.split(".")[0] == "pyspark") == []
    _rename(project, 7)
    small = project.cli("--all", "--dbt", "build", "--json")
    assert small.returncode == 0, small.stderr[-3000:]
    assert _statuses(json.loads(small.stdout)) == {"dbo.Items": "landed"}
    _rename(project, 8)
    project.env["PARTITION_ROWS"] = "1"  # partitions of a fixed size: Spark reads them
    refused = project.cli("--all", "--dbt", "build", "--json")
    assert refused.returncode == 1, refused.stderr[-3000:]
    assert _statuses(json.loads(refused.stdout)) == {"dbo.Items": "failed"}

    del project.env["SPARK_HOME"]
    assert _statuses(_pass(project)) == {"dbo.Items": "landed"}
    assert_replicas_equal(project)


def test_a_pass_with_nothing_to_read_has_dbt_parse_nothing(project: Project, tmp_path: Path) -> None:
    """dbt's process imports dbt and parses the project (which loads dbt's Postgres adapter) once a table
    is found to have rows to read. A `--every` process whose first sync finds nothing to read, once a pass
    has checked dbt's setup, is watched for seconds after that sync: neither starts."""
    items_table(project, 5)
    assert _statuses(_pass(project)) == {"dbo.Items": "landed"}  # and dbt's setup checked

    project.env["PYTHONPROFILEIMPORTTIME"] = "1"
    log = tmp_path / "every.log"
    loop = Loop(project, log, "--all", "--dbt", "build", "--every", "1h", "--json")
    try:
        assert _statuses(loop.next_sync()) == {"dbo.Items": "unchanged"}
        time.sleep(5)  # dbt's import and a parse of this project take less
    finally:
        assert loop.stop() == 0, log.read_text()[-3000:]
    assert _imported(log, "extract.sync_pass")
    assert not _imported(log, "dbt.cli.main")
    assert not _imported(log, "dbt.adapters.postgres")


def _imported(log: Path, module: str) -> bool:
    """Whether `module` or one of its submodules was imported, as `PYTHONPROFILEIMPORTTIME` logs it."""
    names = (line.rsplit("|", 1)[-1].strip() for line in log.read_text().splitlines() if "|" in line)
    return any(name == module or name.startswith(module + ".") for name in names)


def _scans(project: Project) -> int:
    with project.source() as conn:
        conn.execute("select pg_stat_clear_snapshot()")
        found = conn.execute("select seq_scan from pg_stat_user_tables where relid = 'dbo.\"Large\"'::regclass")
        return int(found.fetchone()[0])  # type: ignore[index]


def test_the_check_of_a_large_table_reads_its_cursor_index(project: Project) -> None:
    """The check asks for the changed rows and the rows of NULL cursor each on its own: their disjunction
    made PostgreSQL scan the table from its start until it met a changed row, which an update had moved
    to its end (0.75 s in 10,000,000 rows, each pass)."""
    with project.source() as conn:
        conn.execute("create schema dbo")
        conn.execute('create table dbo."Large" ("Id" integer primary key, "Name" text, "ModifiedDate" timestamp(3))')
        conn.execute('create index on dbo."Large" ("ModifiedDate")')
        conn.execute(
            """insert into dbo."Large" select i, 'item', timestamp '2026-01-01' + i * interval '1 second'"""
            " from generate_series(1, 50000) as i"
        )
        conn.execute('analyze dbo."Large"')
    project.write_sync_tables(["dbo,Large,ModifiedDate,,true"])
    project.generate()
    landed = project.cli("--all", "--safety-window", "0s")
    assert landed.returncode == 0, landed.stderr[-3000:]
    project.merge()
    with project.source() as conn:
        conn.execute(
            """update dbo."Large" set "Name" = 'renamed', "ModifiedDate" = clock_timestamp() where "Id" % 50 = 0"""
        )
        conn.execute('analyze dbo."Large"')
    scans = _scans(project)
    checked = project.cli("--all", "--safety-window", "0s", "--json")
    assert checked.returncode == 0, checked.stderr[-3000:]
    assert _statuses(json.loads(checked.stdout)) == {"dbo.Large": "landed"}
    assert _scans(project) == scans


def _rename(project: Project, key: int) -> None:
    with project.source() as conn:
        conn.execute(
            """update dbo."Items" set "Name" = 'renamed', "ModifiedDate" = clock_timestamp() where "Id" = %s""", (key,)
        )
