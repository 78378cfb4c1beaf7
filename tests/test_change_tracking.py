"""Change Tracking as a reader (emulated in the stand-in, extract/devtools/change_tracking.py): chosen for a
tracked table; a sync alone brings deletes, updates that leave every date alone, key changes and swaps;
a transaction that began before another and commits after it is not lost; an expired version brings
its table alone back by a reconcile (or fails it, when asked); a table whose tracking was switched off
is named."""

from __future__ import annotations

import json

import psycopg
import pytest

from extract.devtools.change_tracking import (
    clean_up,
    disable_change_tracking,
    enable_change_tracking,
    install_change_tracking,
)
from tests.conftest import Project
from tests.replica_check import assert_replicas_equal

ROWS = 30


@pytest.fixture
def tracked(project: Project) -> Project:
    with project.source() as conn:
        install_change_tracking(conn)
        conn.execute("create schema dbo")
        conn.execute(
            """create table dbo."Orders" ("Id" integer primary key, "Status" text, "ModifiedDate" timestamp(3))"""
        )
        conn.execute(
            """create table dbo."Lines" ("OrderId" integer, "LineNo" smallint, "Qty" integer,
               primary key ("OrderId", "LineNo"))"""
        )
        conn.execute(
            """insert into dbo."Orders" select i, 'open', timestamp '2026-01-01' from generate_series(1, %s) as i""",
            (ROWS,),
        )
        conn.execute("""insert into dbo."Lines" select i % 10, i / 10, i from generate_series(1, 40) as i""")
        for table in ("Orders", "Lines"):
            enable_change_tracking(conn, "dbo", table)
    project.write_sync_tables(["dbo,Orders,,,true", "dbo,Lines,,,true"])
    project.generate()
    project.sync_replicas()
    return project


def _state(project: Project, table: str) -> tuple[str, str]:
    with project.target() as conn:
        row = conn.execute(
            "select reader, cursor_value from _migration.stream_state where table_key like %s", (f"%{table.lower()}",)
        ).fetchone()
    assert row is not None
    return str(row[0]), str(row[1])


def test_a_tracked_table_is_read_by_change_tracking_from_the_version_read_first(tracked: Project) -> None:
    reader, version = _state(tracked, "Orders")
    assert reader == "change_tracking" and version.startswith("ct:")
    plan = tracked.planner.plan(tracked.planner.find("dbo.Orders"))
    assert plan.cursor is None and plan.changes is not None  # ModifiedDate is a candidate, not used
    assert_replicas_equal(tracked)


def test_a_sync_alone_brings_deletes_dateless_updates_and_key_changes(tracked: Project) -> None:
    with tracked.source() as conn:
        conn.execute("""update dbo."Orders" set "Status" = 'shipped' where "Id" in (1, 2)""")  # dates left
        conn.execute("""delete from dbo."Orders" where "Id" in (3, 4, 5)""")
        conn.execute("""insert into dbo."Orders" values (100, 'new', timestamp '2020-01-01')""")  # backdated
        conn.execute("""update dbo."Orders" set "Id" = 200 where "Id" = 6""")  # a key change
        with conn.transaction():  # a swap of two keys
            conn.execute("""update dbo."Orders" set "Id" = -7 where "Id" = 7""")
            conn.execute("""update dbo."Orders" set "Id" = 7 where "Id" = 8""")
            conn.execute("""update dbo."Orders" set "Id" = 8 where "Id" = -7""")
        conn.execute("""delete from dbo."Lines" where "OrderId" = 1""")
        conn.execute("""update dbo."Lines" set "LineNo" = "LineNo" + 10 where "OrderId" = 2 and "LineNo" = 1""")
        conn.execute("""insert into dbo."Orders" values (9999, 'gone', null)""")
        conn.execute("""delete from dbo."Orders" where "Id" = 9999""")  # inserted and deleted between syncs
    results = {r.table: r for r in tracked.extract()}
    # Only the keys that changed and still exist are read: 1, 2, 100, 200, 7, 8.
    assert results["dbo.Orders"].rows_landed == 6
    assert results["dbo.Orders"].migration_type == "incremental"
    tracked.merge()
    assert_replicas_equal(tracked)
    deleted = tracked.scalar("select sum(rows_deleted) from _migration.merge_log where table_key like %s", ("%orders",))
    assert deleted == 4  # 3, 4, 5 and the old key 6 (9999 never reached the replica)
    # Nothing changed since: the next sync reads nothing.
    assert {r.table: r.rows_landed for r in tracked.extract()} == {"dbo.Orders": 0, "dbo.Lines": 0}


def test_a_run_says_it_reads_what_change_tracking_recorded(tracked: Project) -> None:
    with tracked.source() as conn:
        conn.execute("""update dbo."Orders" set "Status" = 'shipped' where "Id" = 1""")
    tracked.assert_reads_recorded("dbo.Orders", "Change Tracking", "ct:")


def test_a_transaction_that_began_first_and_commits_last_is_not_lost(tracked: Project) -> None:
    with psycopg.connect(tracked.source_url) as early, tracked.source() as late:
        early.execute("""update dbo."Orders" set "Status" = 'early' where "Id" = 1""")  # in flight
        late.execute("""update dbo."Orders" set "Status" = 'late' where "Id" = 2""")  # began after, committed
        tracked.sync_replicas()
        early.commit()
    tracked.sync_replicas()
    assert_replicas_equal(tracked)
    # Row 1's change (the lower version, committed last) lands with the second sync.


def _expire_orders(project: Project) -> None:
    """Changes to both tables, then a retention cleanup of dbo.Orders' records past its state."""
    with project.source() as conn:
        conn.execute("""update dbo."Orders" set "Status" = 'lost' where "Id" = 1""")
        conn.execute("""delete from dbo."Orders" where "Id" = 2""")
        conn.execute("""update dbo."Lines" set "Qty" = 0 where "OrderId" = 1""")
        clean_up(conn, "dbo", "Orders")


def test_an_expired_version_is_recovered_by_a_reconcile_of_that_table_alone(tracked: Project) -> None:
    _expire_orders(tracked)
    results = {r.table: r for r in tracked.extract()}
    assert results["dbo.Orders"].migration_type == "reconcile"
    assert results["dbo.Orders"].rows_landed == 1  # the update; the delete is a tombstone
    assert results["dbo.Lines"].migration_type == "incremental"
    tracked.merge()
    assert_replicas_equal(tracked)
    reader, version = _state(tracked, "Orders")
    assert reader == "change_tracking" and version == results["dbo.Orders"].watermark_candidate
    reason = tracked.scalar(
        "select reason from _migration.state_audit where table_key like %s order by audit_id desc limit 1",
        ("%orders",),
    )
    assert "Change Tracking's changes since ct:" in reason and "expired" in reason and "reconciled" in reason
    # From the new version on, Change Tracking reads again.
    with tracked.source() as conn:
        conn.execute("""update dbo."Orders" set "Status" = 'after' where "Id" = 3""")
    results = {r.table: r for r in tracked.extract()}
    assert (results["dbo.Orders"].migration_type, results["dbo.Orders"].rows_landed) == ("incremental", 1)
    tracked.merge()
    assert_replicas_equal(tracked)


def test_an_expired_version_with_nothing_to_repair_still_moves_the_state_on(tracked: Project) -> None:
    with tracked.source() as conn:
        clean_up(conn, "dbo", "Orders")  # nothing changed, but the records past the state are gone
    _, before = _state(tracked, "Orders")
    assert {r.table: r.migration_type for r in tracked.extract()}["dbo.Orders"] == "reconcile"
    tracked.merge()
    _, after = _state(tracked, "Orders")
    assert after > before
    assert {r.table: r.migration_type for r in tracked.extract()}["dbo.Orders"] == "incremental"


def test_an_expired_version_fails_its_table_alone_when_asked(tracked: Project) -> None:
    _expire_orders(tracked)
    tracked.env["TIDEMARK_ON_EXPIRED_VERSION"] = "fail"
    result = tracked.cli("--all", "--json")
    assert result.returncode == 1, result.stderr
    assert "dbo.Orders: Change Tracking no longer holds the changes since ct:" in result.stderr
    report = json.loads(result.stdout)
    statuses = {t["table"]: t["status"] for t in report["tables"]}
    assert statuses == {"dbo.Orders": "failed", "dbo.Lines": "landed"}


def test_a_table_whose_tracking_was_switched_off_is_named(tracked: Project) -> None:
    tracked.write_sync_tables(
        ["dbo,Orders,,,true,change_tracking", "dbo,Lines,,,true,"],
        header="source_schema,source_table,cursor_column,primary_key,enabled,reader",
    )
    with tracked.source() as conn:
        disable_change_tracking(conn, "dbo", "Orders")
    result = tracked.cli("--table", "dbo.Orders")
    assert result.returncode == 2, result.stderr
    assert "dbo.Orders: reader change_tracking, but Change Tracking is not enabled on the table" in result.stderr


def test_a_pass_finds_a_tracked_table_without_changes_unchanged(tracked: Project) -> None:
    assert tracked.cli("--all").returncode == 0  # the first pass reads the catalog whole: every table runs
    tracked.merge()
    with tracked.source() as conn:
        conn.execute("""update dbo."Lines" set "Qty" = -1 where "OrderId" = 3""")
    result = tracked.cli("--all", "--json")
    assert result.returncode == 0, result.stderr
    statuses = {t["table"]: t["status"] for t in json.loads(result.stdout)["tables"]}
    assert statuses == {"dbo.Orders": "unchanged", "dbo.Lines": "landed"}


def test_switching_between_change_tracking_and_a_clock_reads_every_row_once(tracked: Project) -> None:
    header = "source_schema,source_table,cursor_column,primary_key,enabled,reader"
    tracked.write_sync_tables(["dbo,Orders,,,true,clock", "dbo,Lines,,,true,"], header=header)
    with tracked.source() as conn:
        conn.execute("""delete from dbo."Orders" where "Id" = 1""")
    runs = {r.table: r.migration_type for r in tracked.extract()}
    assert runs == {"dbo.Orders": "full", "dbo.Lines": "incremental"}
    tracked.merge()
    assert _state(tracked, "Orders")[0] == "clock_watermark"
    assert_replicas_equal(tracked)
    tracked.write_sync_tables(["dbo,Orders,,,true,", "dbo,Lines,,,true,"], header=header)
    with tracked.source() as conn:
        conn.execute("""delete from dbo."Orders" where "Id" = 2""")
    assert {r.table: r.migration_type for r in tracked.extract()}["dbo.Orders"] == "full"
    tracked.merge()
    assert _state(tracked, "Orders")[0] == "change_tracking"
    assert {r.table: r.migration_type for r in tracked.extract()}["dbo.Orders"] == "incremental"
    assert_replicas_equal(tracked)


def test_a_rewind_reads_again_exactly_the_keys_changed_since_then(tracked: Project) -> None:
    _, first = _state(tracked, "Orders")
    with tracked.source() as conn:
        conn.execute("""update dbo."Orders" set "Status" = 'a' where "Id" in (1, 2)""")
    tracked.sync_replicas()
    with tracked.source() as conn:
        conn.execute("""update dbo."Orders" set "Status" = 'b' where "Id" = 3""")
    tracked.sync_replicas()
    number = str(int(first.removeprefix("ct:")))
    ahead = tracked.cli("state", "set", "dbo.Orders", "--cursor", "99999999999")
    assert ahead.returncode == 2 and "is ahead of the source" in ahead.stderr, ahead.stderr
    bad = tracked.cli("state", "rewind", "dbo.Orders", "--since", "2026-01-01")
    assert bad.returncode == 2 and "is not a Change Tracking version" in bad.stderr, bad.stderr
    rewound = tracked.cli("state", "rewind", "dbo.Orders", "--since", number)
    assert rewound.returncode == 0, rewound.stderr
    assert _state(tracked, "Orders")[1] == first
    assert {r.table: r.rows_landed for r in tracked.extract("dbo.Orders")} == {"dbo.Orders": 3}


def test_status_shows_a_table_whose_position_is_a_version(tracked: Project) -> None:
    """The state model reads a committed position as a time only when it is one (a version is not)."""
    shown = tracked.cli("status", "--json")
    assert shown.returncode == 0, shown.stderr
    tables = {t["table"]: t for t in json.loads(shown.stdout)["tables"]}
    assert tables["dbo.Orders"]["sync_status"] and tables["dbo.Orders"]["last_sync_timestamp"] is None
