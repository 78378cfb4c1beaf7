"""The whole path on demo data: extract, dbt build (merge, snapshots, tests, state), checks."""

from __future__ import annotations

import subprocess
import sys

from extract.devtools.demo.changes import apply_changes
from extract.project.verify import verify_tables
from tests.conftest import REPO, Project
from tests.demo_fixture import demo, merge_counts
from tests.replica_check import assert_replicas_equal

__all__ = ["demo"]


def test_first_sync_replicates_every_table_exactly(demo: Project) -> None:
    demo.sync()
    assert assert_replicas_equal(demo) > 60
    assert merge_counts(demo, "customers") == (60, 0, 0, 0)
    state = demo.scalar(
        "select count(*) from _migration._migration_state where sync_status = 'success' and rows_inserted > 0"
    )
    assert state == 5
    snapshot_rows = demo.scalar("select count(*) from demo__" + demo.source_db + "__dbo.customers__history")
    assert snapshot_rows == 60


def test_incremental_sync_counts_inserts_updates_and_unchanged(demo: Project) -> None:
    demo.sync_replicas()
    with demo.source() as conn:
        conn.execute(
            """insert into dbo."Customers" values
            (1001, 'Zoë Nguyễn', null, 'JP', 12.50, true, gen_random_uuid(), clock_timestamp() at time zone 'UTC'),
            (1002, '李雷', 'li@example.com', 'JP', 0.01, false, gen_random_uuid(),
             clock_timestamp() at time zone 'UTC')"""
        )
        conn.execute(
            """update dbo."Customers" set "Email" = 'new@example.com',
            "ModifiedDate" = clock_timestamp() at time zone 'UTC' where "CustomerID" in (1, 2, 3)"""
        )
    demo.sync_replicas()
    assert merge_counts(demo, "customers") == (2, 3, 0, 0)
    assert_replicas_equal(demo)


def test_demo_change_batches_replicate_exactly(demo: Project) -> None:
    demo.sync()
    for seed in (1, 2):
        with demo.source() as conn:
            apply_changes(conn, seed)
        demo.sync()
        assert_replicas_equal(demo)


def test_full_refresh_table_deletes_rows_gone_from_source(demo: Project) -> None:
    demo.sync()
    with demo.source() as conn:
        conn.execute("""delete from dbo."Countries" where "CountryCode" in ('AT', 'BR')""")
        conn.execute("""insert into dbo."Countries" values ('NO', 'Norge', 5500000)""")
    demo.sync()
    assert merge_counts(demo, "countries") == (1, 0, 10, 2)
    assert_replicas_equal(demo)
    # The replica's dbt snapshot records the hard deletes (hard_deletes: invalidate).
    with demo.target() as conn:
        closed = conn.execute(
            f'select countrycode from "demo__{demo.source_db}__dbo".countries__history'
            " where dbt_valid_to is not null order by 1"
        ).fetchall()
    assert closed == [("AT",), ("BR",)]


def test_great_expectations_loads_under_a_main_module_without_a_file() -> None:
    # `python -c`, pytest-xdist workers and some schedulers' workers have such a __main__;
    # pyspark.sql.connect, imported by great_expectations, exits the process there.
    script = "import extract.quality\nprint('loaded', extract.quality.great_expectations.__name__)\n"
    done = subprocess.run([sys.executable, "-c", script], cwd=REPO, capture_output=True, text=True, check=False)
    assert (done.returncode, done.stdout.strip()) == (0, "loaded great_expectations")


def test_state_schema_is_closed_to_public(demo: Project) -> None:
    demo.sync_replicas()
    with demo.target() as conn:
        conn.execute("create role tidemark_reader login")
        try:
            usage = conn.execute("select has_schema_privilege('tidemark_reader', '_migration', 'usage')").fetchone()
            public = conn.execute("select has_schema_privilege('public', '_migration', 'usage')").fetchone()
        finally:
            conn.execute("drop role tidemark_reader")
    assert usage == (False,)
    assert public == (False,)


def test_verify_finds_a_changed_value_that_counts_cannot(demo: Project) -> None:
    demo.sync_replicas()
    plans = [demo.planner.plan(c) for c in demo.planner.enabled_tables()]
    assert all(v.ok for v in verify_tables(demo.planner, plans))
    with demo.target() as conn:
        conn.execute(f"""update "demo__{demo.source_db}__dbo".products set listprice = listprice + 0.0001
            where sku = 'SKU-000003'""")
        conn.execute(f"""update "demo__{demo.source_db}__dbo".countries set name = rtrim(name) || ' '
            where countrycode = 'AT'""")
    different = {v.table: (v.source_rows, v.replica_rows) for v in verify_tables(demo.planner, plans) if not v.ok}
    assert different == {"dbo.Products": (30, 30), "dbo.Countries": (12, 12)}


def test_verify_command_exit_codes(demo: Project) -> None:
    demo.sync_replicas()
    same = demo.cli("verify", "--all")
    assert same.returncode == 0, same.stderr[-2000:]
    assert "all 5 table(s) match" in same.stdout
    with demo.target() as conn:
        conn.execute(f'update "demo__{demo.source_db}__dbo".orders set status = %s where orderid = 2', ("lost",))
    different = demo.cli("verify", "--all")
    assert different.returncode == 1
    assert "dbo.Orders" in different.stdout and "DIFFERENT" in different.stdout
    assert "1 of 5 table(s) differ: dbo.Orders" in different.stderr
