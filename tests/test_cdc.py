"""CDC as a reader (emulated in the stand-in, extract/devtools/cdc.py): chosen for a captured table; a sync
alone brings deletes, updates that leave every date alone, key changes and swaps, from the change rows'
last image of each key; LSNs order commits, so a transaction that began first and commits last is not
lost; an expired LSN brings its table back by a reconcile; a second capture instance made after a schema
change is followed from where it begins."""

from __future__ import annotations

import psycopg
import pytest

from extract.devtools.cdc import enable_table, install_cdc
from extract.devtools.cdc_cleanup import clean_up
from tests.conftest import Project
from tests.replica_check import assert_replicas_equal


@pytest.fixture
def captured(project: Project) -> Project:
    with project.source() as conn:
        install_cdc(conn)
        conn.execute("create schema dbo")
        conn.execute("""create table dbo."Orders" ("Id" integer primary key, "Status" text, "ModifiedDate" date)""")
        conn.execute("""insert into dbo."Orders" select i, 'open', date '2026-01-01' from generate_series(1, 30) i""")
        conn.execute(
            """create table dbo."Lines" ("OrderId" integer, "LineNo" smallint, "Qty" integer,
               primary key ("OrderId", "LineNo"))"""
        )
        conn.execute("""insert into dbo."Lines" select i % 10, i / 10, i from generate_series(1, 40) as i""")
        enable_table(conn, "dbo", "Orders")
        enable_table(conn, "dbo", "Lines")
    project.write_sync_tables(["dbo,Orders,,,true", "dbo,Lines,,,true"])
    project.generate()
    project.sync_replicas()
    return project


def _state(project: Project) -> tuple[str, str]:
    with project.target() as conn:
        row = conn.execute(
            "select reader, cursor_value from _migration.stream_state where table_key like %s", ("%orders",)
        ).fetchone()
    assert row is not None
    return str(row[0]), str(row[1])


def test_a_sync_alone_brings_every_kind_of_change_from_the_last_image_of_each_key(captured: Project) -> None:
    reader, position = _state(captured)
    assert reader == "cdc" and position.startswith("lsn:")
    with captured.source() as conn:
        conn.execute("""update dbo."Orders" set "Status" = 'shipped' where "Id" in (1, 2)""")
        conn.execute("""update dbo."Orders" set "Status" = 'returned' where "Id" = 2""")  # two images of 2
        conn.execute("""delete from dbo."Orders" where "Id" in (3, 4, 5)""")
        conn.execute("""insert into dbo."Orders" values (100, 'new', date '2020-01-01')""")
        conn.execute("""update dbo."Orders" set "Id" = 200 where "Id" = 6""")
        with conn.transaction():
            conn.execute("""update dbo."Orders" set "Id" = -7 where "Id" = 7""")
            conn.execute("""update dbo."Orders" set "Id" = 7 where "Id" = 8""")
            conn.execute("""update dbo."Orders" set "Id" = 8 where "Id" = -7""")
        conn.execute("""insert into dbo."Orders" values (9999, 'gone', null)""")
        conn.execute("""delete from dbo."Orders" where "Id" = 9999""")
        conn.execute("""insert into dbo."Orders" values (3, 'back', null)""")  # deleted above, inserted again
        conn.execute("""update dbo."Lines" set "LineNo" = "LineNo" + 10 where "OrderId" = 2 and "LineNo" = 1""")
    results = {r.table: r for r in captured.extract()}
    # The last image of 1, 2, 3, 100, 200, 7 and 8; -7's last is a delete, as are 4, 5, 6 and 9999's.
    assert (results["dbo.Orders"].migration_type, results["dbo.Orders"].rows_landed) == ("incremental", 7)
    captured.merge()
    assert_replicas_equal(captured)
    assert {r.table: r.rows_landed for r in captured.extract()} == {"dbo.Orders": 0, "dbo.Lines": 0}


def test_a_run_says_it_reads_what_cdc_recorded(captured: Project) -> None:
    with captured.source() as conn:
        conn.execute("""update dbo."Orders" set "Status" = 'shipped' where "Id" = 1""")
    captured.assert_reads_recorded("dbo.Orders", "CDC", "lsn:")


def test_lsns_order_commits_so_a_transaction_that_began_first_and_commits_last_is_read(captured: Project) -> None:
    with psycopg.connect(captured.source_url) as early, captured.source() as late:
        early.execute("""update dbo."Orders" set "Status" = 'early' where "Id" = 1""")
        late.execute("""update dbo."Orders" set "Status" = 'late' where "Id" = 2""")
        captured.sync_replicas()
        early.commit()
    captured.sync_replicas()
    assert_replicas_equal(captured)


def test_an_expired_lsn_is_recovered_by_a_reconcile_of_that_table(captured: Project) -> None:
    with captured.source() as conn:
        conn.execute("""update dbo."Orders" set "Status" = 'lost' where "Id" = 1""")
        conn.execute("""delete from dbo."Orders" where "Id" = 2""")
        clean_up(conn, "dbo_Orders")
    results = {r.table: r for r in captured.extract()}
    assert results["dbo.Orders"].migration_type == "reconcile"
    assert results["dbo.Lines"].migration_type == "incremental"
    captured.merge()
    assert_replicas_equal(captured)
    assert _state(captured) == ("cdc", results["dbo.Orders"].watermark_candidate)


def test_a_second_capture_instance_is_followed_from_where_it_begins(captured: Project) -> None:
    with captured.source() as conn:
        conn.execute("""update dbo."Orders" set "Status" = 'before' where "Id" in (1, 2)""")
        conn.execute("""delete from dbo."Orders" where "Id" = 3""")
        enable_table(conn, "dbo", "Orders", "dbo_Orders_v2")
        conn.execute("""update dbo."Orders" set "Status" = 'after' where "Id" in (2, 4)""")
    captured.close()  # a new pass: it finds the second instance
    first = {r.table: r for r in captured.extract()}["dbo.Orders"]
    # The older instance, up to where the newer begins: its keys 1 and 2, as the table has them now.
    assert (first.migration_type, first.rows_landed) == ("incremental", 2)
    captured.merge()
    second = {r.table: r for r in captured.extract()}["dbo.Orders"]
    assert second.rows_landed == 2  # 2 and 4, from the newer instance
    captured.merge()
    assert_replicas_equal(captured)


def test_a_column_added_with_a_second_capture_instance_is_backfilled_then_read_from_it(captured: Project) -> None:
    with captured.source() as conn:
        conn.execute("""update dbo."Orders" set "Status" = 'before' where "Id" = 1""")
        conn.execute("""alter table dbo."Orders" add column "Note" text""")  # dbo_Orders lacks it
        enable_table(conn, "dbo", "Orders", "dbo_Orders_v2")
        conn.execute("""update dbo."Orders" set "Note" = 'after' where "Id" in (2, 4)""")
    captured.close()  # a new pass: it finds the second instance
    # The new column is filled by reading every row (docs/schema-changes.md), from the highest LSN.
    assert {r.table: r for r in captured.extract()}["dbo.Orders"].migration_type == "full"
    captured.merge()
    with captured.source() as conn:
        conn.execute("""update dbo."Orders" set "Note" = 'later' where "Id" = 5""")
    second = {r.table: r for r in captured.extract()}["dbo.Orders"]
    assert (second.migration_type, second.rows_landed) == ("incremental", 1)
    captured.merge()
    assert_replicas_equal(captured)


def test_a_capture_instance_of_some_columns_brings_whole_rows_from_the_table(project: Project) -> None:
    """A capture instance made with a column list lacks columns the replica has: a sync reads the changed
    keys from it and their rows from the table, and its deletes still come from it."""
    with project.source() as conn:
        install_cdc(conn)
        conn.execute("create schema dbo")
        conn.execute(
            """create table dbo."Orders" ("Id" integer primary key, "Status" text, "Note" text, "ModifiedDate" date)"""
        )
        conn.execute(
            """insert into dbo."Orders" select i, 'open', 'n', date '2026-01-01' from generate_series(1, 20) as i"""
        )
        enable_table(conn, "dbo", "Orders", captured_columns=["Id", "Status"])
    project.write_sync_tables(["dbo,Orders,,,true"])
    project.generate()
    project.sync_replicas()
    assert _state(project)[0] == "cdc"
    with project.source() as conn:
        conn.execute("""update dbo."Orders" set "Note" = 'only an uncaptured column' where "Id" = 1""")
        conn.execute("""update dbo."Orders" set "Status" = 'shipped', "ModifiedDate" = null where "Id" = 2""")
        conn.execute("""delete from dbo."Orders" where "Id" in (3, 4)""")
        conn.execute("""insert into dbo."Orders" values (100, 'new', 'fresh', date '2020-01-01')""")
        conn.execute("""update dbo."Orders" set "Id" = 200 where "Id" = 5""")
    results = {r.table: r for r in project.extract()}
    assert results["dbo.Orders"].migration_type == "incremental", results
    project.merge()
    assert assert_replicas_equal(project) == 19  # Note of 1 and ModifiedDate of 2 compared too
