"""The watermark: no lost change, commit only on success, at-least-once re-reads."""

from __future__ import annotations

import psycopg

from extract.core.observer import ClockRead, Event, Landed
from extract.landing.staging import duplicate_key_sample, keep_latest_versions
from tests.conftest import Project
from tests.demo_fixture import committed_watermark, demo, merge_counts, refuse_credit_limit_change
from tests.replica_check import assert_replicas_equal

__all__ = ["demo"]

STAMP = "clock_timestamp() at time zone 'UTC'"


def touch_customer(project: Project, customer: int, name: str) -> None:
    """Rename a customer in the source, stamping the change with the source's clock."""
    with project.source() as conn:
        conn.execute(
            f"""update dbo."Customers" set "Name" = %s, "ModifiedDate" = {STAMP} where "CustomerID" = %s""",
            (name, customer),
        )


def test_rows_with_null_cursor_are_picked_up_every_run(demo: Project) -> None:
    demo.sync_replicas()
    with demo.source() as conn:
        conn.execute("""insert into dbo."Orders" values (9001, 1, current_date, 'open', 'no cursor yet', 10.5, null)""")
        conn.execute("""update dbo."Orders" set "Notes" = 'changed, still NULL' where "UpdatedAt" is null""")
    demo.sync_replicas()
    assert demo.scalar(f'select notes from "demo__{demo.source_db}__dbo".orders where orderid = 9001') == (
        "changed, still NULL"
    )
    assert_replicas_equal(demo)


def test_row_changed_while_extract_runs_is_picked_up_next_run(demo: Project) -> None:
    demo.sync_replicas()

    def change_after_clock_read(event: Event) -> None:
        # Committed after the watermark candidate was read, before the data query.
        if isinstance(event, ClockRead):
            touch_customer(demo, 10, "during")
        # Committed after the batch was read: this run cannot see it.
        if isinstance(event, Landed):
            touch_customer(demo, 11, "after")

    demo.extract("dbo.Customers", observer=change_after_clock_read)
    demo.merge()
    replica = f'"demo__{demo.source_db}__dbo".customers'
    assert demo.scalar(f"select name from {replica} where customerid = 10") == "during"
    assert demo.scalar(f"select name from {replica} where customerid = 11") != "after"
    demo.sync_replicas()
    assert demo.scalar(f"select name from {replica} where customerid = 11") == "after"
    # Customer 10 was stamped after the candidate: re-read once more, and found unchanged.
    assert merge_counts(demo, "customers") == (0, 1, 1, 0)
    assert_replicas_equal(demo)


def test_unchanged_rows_are_not_rewritten(demo: Project) -> None:
    demo.sync_replicas()
    replica = f'"demo__{demo.source_db}__dbo"'
    with demo.target() as conn:
        before_orders = conn.execute(f"select orderid, xmin::text from {replica}.orders order by 1").fetchall()
        before_countries = conn.execute(
            f"select countrycode, xmin::text from {replica}.countries order by 1"
        ).fetchall()
    null_cursor_orders = demo.scalar(f"select count(*) from {replica}.orders where updatedat is null")
    assert null_cursor_orders > 0
    demo.sync_replicas()  # re-reads every NULL-cursor order and all countries; nothing changed
    with demo.target() as conn:
        after_orders = conn.execute(f"select orderid, xmin::text from {replica}.orders order by 1").fetchall()
        after_countries = conn.execute(f"select countrycode, xmin::text from {replica}.countries order by 1").fetchall()
    assert after_orders == before_orders
    assert after_countries == before_countries
    assert merge_counts(demo, "orders") == (0, 0, null_cursor_orders, 0)
    assert merge_counts(demo, "countries") == (0, 0, len(before_countries), 0)


def test_failed_build_does_not_advance_the_watermark(demo: Project) -> None:
    demo.sync_replicas()
    before = committed_watermark(demo, "customers")
    assert before is not None
    replica = refuse_credit_limit_change(demo, 5)
    demo.extract("dbo.Customers")
    failed = demo.merge(check=False)
    assert failed.returncode != 0
    assert committed_watermark(demo, "customers") == before
    assert demo.scalar(f"select creditlimit from {replica} where customerid = 5") != 5000000
    with demo.target() as conn:
        conn.execute(f"alter table {replica} drop constraint limit_guard")
    demo.merge()
    after = committed_watermark(demo, "customers")
    assert after is not None and after > before
    assert_replicas_equal(demo)


def test_failed_extract_does_not_advance_the_watermark(demo: Project) -> None:
    demo.sync_replicas()
    before = committed_watermark(demo, "customers")
    touch_customer(demo, 6, "lost?")

    def fail_after_clock(event: Event) -> None:
        if isinstance(event, ClockRead):
            raise RuntimeError("source went away")

    try:
        demo.extract("dbo.Customers", observer=fail_after_clock)
    except RuntimeError:
        pass
    else:
        raise AssertionError("the extract should have failed")
    demo.merge()
    assert committed_watermark(demo, "customers") == before
    assert demo.scalar("select sync_status from _migration._migration_state where source_table = 'Customers'") == (
        "failed"
    )
    demo.sync_replicas()
    assert_replicas_equal(demo)


def test_extract_twice_then_build_once_loses_nothing(demo: Project) -> None:
    demo.sync_replicas()
    touch_customer(demo, 7, "first")
    first = demo.extract("dbo.Customers")[0]
    touch_customer(demo, 8, "second")
    second = demo.extract("dbo.Customers")[0]
    # The first run was not merged, so the second starts from the same committed watermark.
    assert second.watermark_used == first.watermark_used
    demo.merge()
    run_ids = demo.scalar(
        "select run_ids from _migration.merge_log where table_key like %s order by merge_id desc limit 1",
        ("%.customers",),
    )
    assert run_ids == [first.run_id, second.run_id]
    assert committed_watermark(demo, "customers") == second.watermark_candidate
    assert_replicas_equal(demo)
    demo.merge()  # nothing pending: idempotent
    assert_replicas_equal(demo)


def test_the_next_extract_clears_merged_staging_rows_and_keeps_unmerged_ones(demo: Project) -> None:
    staging = f'"demo__{demo.source_db}__dbo".stg__customers'

    def staged_runs() -> dict[int, int]:
        with demo.target() as conn:
            rows = conn.execute(f"select _tidemark_run_id, count(*) from {staging} group by 1").fetchall()
        return {int(run): int(count) for run, count in rows}

    demo.sync_replicas()
    assert staged_runs() == {}  # the first sync's own table became the replica
    touch_customer(demo, 7, "x")
    demo.sync_replicas()
    first = demo.scalar("select max(run_id) from _migration.run_log where table_key like %s", ("%.customers",))
    assert staged_runs() == {first: 1}  # the merge leaves its rows to the next extract
    touch_customer(demo, 7, "y")
    second = demo.extract("dbo.Customers")[0]
    assert staged_runs() == {second.run_id: 1}  # nothing was waiting for a merge: truncated
    third = demo.extract("dbo.Customers")[0]
    # The second run has not been merged: its rows stay beside the third run's.
    assert staged_runs() == {second.run_id: 1, third.run_id: third.rows_landed}
    demo.merge()
    assert merge_counts(demo, "customers") == (0, 1, 0, 0)
    assert_replicas_equal(demo)


def test_a_row_read_twice_in_one_run_keeps_its_latest_version(demo: Project) -> None:
    """A row that changes while a run reads its partitions can be read in two of them."""
    demo.sync_replicas()
    touch_customer(demo, 12, "latest")
    run = demo.extract("dbo.Customers")[0]
    staging = f'"demo__{demo.source_db}__dbo".stg__customers'
    with demo.target() as conn:  # the version an earlier partition would have read
        conn.execute(f"insert into {staging} select * from {staging} where customerid = 12")
        conn.execute(
            f"""update {staging} set name = name || ' (stale)', modifieddate = modifieddate - interval '1 hour'
            where ctid = (select min(ctid) from {staging} where customerid = 12)"""
        )
    plan = demo.planner.plan(demo.planner.find("dbo.Customers"))
    with psycopg.connect(demo.target_url) as conn:
        assert duplicate_key_sample(
            conn, (plan.names.schema, plan.names.staging_table), plan.key_columns, run.run_id
        ) == (12,)
        assert keep_latest_versions(conn, plan.names, plan.key_columns, "modifieddate", run.run_id) == 1
        assert (
            duplicate_key_sample(conn, (plan.names.schema, plan.names.staging_table), plan.key_columns, run.run_id)
            is None
        )
    demo.merge()
    assert demo.scalar(f'select name from "demo__{demo.source_db}__dbo".customers where customerid = 12') == "latest"
    assert_replicas_equal(demo)


def test_a_watermark_that_would_move_back_fails_the_run(demo: Project) -> None:
    """The committed watermark lies after the source's clock (the clock went back, or the state was
    edited): the run fails with a LOGICAL ERROR before it reads a row, and commits nothing."""
    demo.sync_replicas()
    with demo.target() as conn:
        conn.execute(
            """update _migration.stream_state set cursor_value = '2099-01-01 00:00:00.000'
            where table_key like '%.customers'"""
        )
    runs_before = demo.scalar("select count(*) from _migration.run_log where status = 'landed'")
    touch_customer(demo, 7, "after the clock went back")
    done = demo.cli("--table", "dbo.Customers")
    assert done.returncode == 1, done.stderr[-2000:]
    assert "LOGICAL ERROR: dbo.Customers: the source reads" in done.stderr
    assert "before the committed watermark 2099-01-01 00:00:00.000" in done.stderr
    assert demo.scalar("select count(*) from _migration.run_log where status = 'landed'") == runs_before
    assert committed_watermark(demo, "customers") == "2099-01-01 00:00:00.000"
