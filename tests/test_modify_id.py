"""Modify-id cursors (SQL Server's rowversion, emulated in the stand-in): the watermark is the lowest
modify id still in flight, so a late commit is read with no safety window; every update moves the
cursor, so a change that leaves the other columns' stamps alone still syncs; a NULL modify id fails
the run; a reconcile compares (key, modify id); a pass finds a table with nothing to read by its modify id."""

from __future__ import annotations

import json

import psycopg
import pytest

from extract.devtools.rowversion import install_rowversion, stamp_with_rowversion
from extract.reconcile.hashes import row_hashes
from tests.conftest import Project
from tests.replica_check import assert_replicas_equal

ROWS = 40


@pytest.fixture
def versioned(project: Project) -> Project:
    with project.source() as conn:
        install_rowversion(conn)
        conn.execute("create schema dbo")
        conn.execute(
            """create table dbo."Orders" ("Id" integer primary key, "Status" text, "ModifiedDate" timestamp(3))"""
        )
        conn.execute(
            """insert into dbo."Orders" select i, 'open', timestamp '2026-01-01' from generate_series(1, %s) as i""",
            (ROWS,),
        )
        stamp_with_rowversion(conn, "dbo", "Orders", "RowVer")
    project.write_sync_tables(["dbo,Orders,,,true"])
    project.generate()
    project.sync_replicas()
    return project


def _cursor(project: Project) -> str:
    plan = project.planner.plan(project.planner.find("dbo.Orders"))
    assert plan.cursor is not None
    return plan.cursor.name


def _watermark(project: Project) -> str:
    return str(project.scalar("select watermark from _migration.committed_watermarks"))


def test_the_rowversion_column_is_the_cursor_and_a_seed_can_override_it(versioned: Project) -> None:
    assert _cursor(versioned) == "RowVer"  # preferred over ModifiedDate, a candidate by name
    assert _watermark(versioned) == f"0x{ROWS + 1:016X}"  # the next value: nothing in flight
    versioned.write_sync_tables(["dbo,Orders,ModifiedDate,,true"])
    assert _cursor(versioned) == "ModifiedDate"


def test_a_late_commit_is_read_with_no_safety_window(versioned: Project) -> None:
    """Row 1 is updated first (the lower modify id) but commits after a sync that read row 2's later
    update; the sync's watermark stops below row 1's, so the next sync reads it."""
    assert versioned.settings.safety_window.total_seconds() == 0
    with psycopg.connect(versioned.source_url) as late, versioned.source() as early:
        late.execute("""update dbo."Orders" set "Status" = 'late' where "Id" = 1""")  # in flight
        early.execute("""update dbo."Orders" set "Status" = 'early' where "Id" = 2""")  # committed
        versioned.sync_replicas()
        in_flight = late.execute("""select "RowVer" from dbo."Orders" where "Id" = 1""").fetchone()
        assert in_flight is not None
        assert _watermark(versioned) == f"0x{in_flight[0]:016X}"
        late.commit()
    versioned.sync_replicas()
    assert_replicas_equal(versioned)


def test_an_update_that_leaves_the_dates_alone_still_syncs(versioned: Project) -> None:
    with versioned.source() as conn:
        conn.execute("""update dbo."Orders" set "Status" = 'corrected' where "Id" in (3, 4)""")
    versioned.sync_replicas()
    assert versioned.scalar("select rows_updated from _migration.merge_log order by merge_id desc limit 1") == 2
    assert_replicas_equal(versioned)


def test_a_null_modify_id_fails_the_run(versioned: Project) -> None:
    with versioned.source() as conn:
        conn.execute('alter table dbo."Orders" alter column "RowVer" drop not null')
        conn.execute('alter table dbo."Orders" disable trigger "Orders__RowVer"')
        conn.execute("""insert into dbo."Orders" values (100, 'unstamped', timestamp '2026-01-01', null)""")
    landed = versioned.scalar("select count(*) from _migration.run_log where status = 'landed'")
    done = versioned.cli("--table", "dbo.Orders")
    assert done.returncode == 1, done.stderr[-2000:]
    assert "LOGICAL ERROR:" in done.stderr and "1 row(s) hold a NULL modify id" in done.stderr
    assert versioned.scalar("select count(*) from _migration.run_log where status = 'landed'") == landed


def test_a_reconcile_compares_key_and_modify_id(versioned: Project) -> None:
    with versioned.source() as conn:
        conn.execute("""delete from dbo."Orders" where "Id" in (5, 6)""")
    done = versioned.cli("reconcile", "--table", "dbo.Orders", "--dbt", "build", "--json")
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(done.stdout)["tables"][0]
    assert result["deleted"] == 2
    assert_replicas_equal(versioned)
    planner = versioned.planner
    hashes = row_hashes(planner.context.dialect, planner.plan(planner.find("dbo.Orders")))
    for expression in (hashes.replica_row, hashes.source_row):
        assert "rowver" in expression.lower() and "status" not in expression.lower()


def test_a_cursor_that_changes_kind_reads_the_table_once_in_full(versioned: Project) -> None:
    """A committed watermark of the other kind (clock or modify id) cannot start the filter: the
    next run reads the table in full, then syncs incrementally on the new cursor."""

    def synced_as() -> tuple[str, str]:
        with versioned.source() as conn:
            conn.execute("""update dbo."Orders" set "Status" = 'touched', "ModifiedDate" = now() where "Id" = 8""")
        versioned.sync_replicas()
        row = versioned.scalar(
            "select migration_type || ' ' || watermark_candidate from _migration.run_log"
            " where status = 'landed' order by run_id desc limit 1"
        )
        kind, watermark = str(row).split(" ", 1)
        assert _watermark(versioned) == watermark
        assert_replicas_equal(versioned)
        return kind, watermark

    versioned.write_sync_tables(["dbo,Orders,ModifiedDate,,true"])
    kind, watermark = synced_as()
    assert kind == "full" and not watermark.startswith("0x")
    assert synced_as()[0] == "incremental"
    versioned.write_sync_tables(["dbo,Orders,,,true"])
    kind, watermark = synced_as()
    assert kind == "full" and watermark.startswith("0x")
    assert synced_as()[0] == "incremental"


def test_a_pass_checks_a_modify_id_table_and_runs_it_once_a_row_changed(versioned: Project) -> None:
    def table_of_pass() -> dict[str, object]:
        done = versioned.cli("--all", "--dbt", "build", "--json")
        assert done.returncode == 0, done.stderr[-3000:]
        (entry,) = json.loads(done.stdout)["tables"]
        return dict(entry)

    # The first pass's catalog read finds the table new (the fixture's sync read no catalog): it runs.
    assert table_of_pass()["status"] == "landed"
    quiet = table_of_pass()
    assert quiet["status"] == "unchanged" and quiet["watermark"] == _watermark(versioned), quiet
    assert str(quiet["checked_through"]).startswith("0x") and str(quiet["checked_through"]) >= _watermark(versioned)
    with versioned.source() as conn:
        conn.execute("""update dbo."Orders" set "Status" = 'shipped' where "Id" = 3""")
    changed = table_of_pass()
    assert (changed["status"], changed["rows_landed"]) == ("landed", 1), changed
    assert_replicas_equal(versioned)
