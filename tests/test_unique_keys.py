"""The source's alternate unique keys (the seed's unique_keys) carried by the replica as DEFERRABLE
INITIALLY DEFERRED constraints: values swapped between rows, and a value freed by a hard delete and
reused by a new row, apply in one merge; ON CONFLICT stays on the primary key."""

from __future__ import annotations

import pytest

from tests.conftest import Project
from tests.replica_check import assert_replicas_equal

HEADER = "source_schema,source_table,cursor_column,primary_key,enabled,unique_keys"
STAMP = "clock_timestamp() at time zone 'UTC'"


@pytest.fixture
def coded(project: Project) -> Project:
    with project.source() as conn:
        conn.execute("create schema dbo")
        conn.execute(
            """create table dbo."Products" ("Id" integer primary key, "Code" text not null unique,
            "Region" text not null, "Slot" integer, unique ("Region", "Slot"), "ModifiedDate" timestamp(3))"""
        )
        conn.execute(
            """insert into dbo."Products" select i, 'code ' || i, 'r' || i % 3, i,
            timestamp '2026-01-01' + i * interval '1 minute' from generate_series(1, 20) as i"""
        )
    project.write_sync_tables(["dbo,Products,ModifiedDate,,true,Code;Region|Slot"], HEADER)
    project.generate()
    project.sync_replicas()
    project.sync_replicas()  # the replica holds rows now: this run adds its unique constraints
    return project


def _replica(project: Project) -> str:
    names = project.planner.plan(project.planner.find("dbo.Products")).names
    return f'"{names.schema}"."{names.table}"'


def _constraints(project: Project) -> list[tuple[str, bool]]:
    with project.target() as conn:
        rows = conn.execute(
            """select string_agg(a.attname, '|' order by a.attname), c.condeferred
            from pg_constraint as c join pg_attribute as a on a.attrelid = c.conrelid and a.attnum = any(c.conkey)
            where c.conrelid = %s::regclass and c.contype = 'u' group by c.oid order by 1""",
            (_replica(project),),
        ).fetchall()
    return [(str(columns), bool(deferred)) for columns, deferred in rows]


def test_values_swapped_between_rows_apply_in_one_merge(coded: Project) -> None:
    assert _constraints(coded) == [("code", True), ("region|slot", True)]  # deferred: checked at commit
    with coded.source() as conn, conn.transaction():
        conn.execute(f"""update dbo."Products" set "Code" = 'swap', "ModifiedDate" = {STAMP} where "Id" = 1""")
        conn.execute(f"""update dbo."Products" set "Code" = 'code 1', "ModifiedDate" = {STAMP} where "Id" = 2""")
        conn.execute(f"""update dbo."Products" set "Code" = 'code 2', "ModifiedDate" = {STAMP} where "Id" = 1""")
        conn.execute(f"""update dbo."Products" set "Slot" = -"Slot", "ModifiedDate" = {STAMP} where "Id" in (3, 6)""")
        conn.execute("""update dbo."Products" set "Slot" = 9 + "Slot" where "Id" in (3, 6)""")
    coded.sync_replicas()
    assert coded.scalar("""select count(*) from _migration.merge_log where rows_updated = 4""") == 1
    assert_replicas_equal(coded)


def test_a_row_holding_a_value_the_batch_gives_another_key_is_displaced(coded: Project) -> None:
    """A value freed by a hard delete and reused: the sync sees the new row but not the delete, and the
    replica row still holding the value is stale (the source's constraint says so): the merge deletes
    and logs it instead of failing at commit. A row that took another value without its cursor moving
    is displaced the same way, and a reconcile brings it back as it is now."""
    with coded.source() as conn:
        conn.execute("""delete from dbo."Products" where "Id" = 5""")
        conn.execute(f"""insert into dbo."Products" values (101, 'code 5', 'r9', 1, {STAMP})""")
    coded.sync_replicas()
    assert coded.scalar("select array_agg(key->>'id') from _migration.delete_log") == ["5"]
    assert coded.scalar("select rows_deleted from _migration.merge_log order by merge_id desc limit 1") == 1
    assert_replicas_equal(coded)

    with coded.source() as conn:
        conn.execute("""update dbo."Products" set "Code" = 'recoded' where "Id" = 7""")
        conn.execute(f"""insert into dbo."Products" values (102, 'code 7', 'r9', 2, {STAMP})""")
    coded.sync_replicas()
    assert coded.scalar(f"select count(*) from {_replica(coded)} where id = 7") == 0
    done = coded.cli("reconcile", "--table", "dbo.Products", "--dbt", "build")
    assert done.returncode == 0, done.stderr[-2000:]
    assert coded.scalar(f"select code from {_replica(coded)} where id = 7") == "recoded"
    assert_replicas_equal(coded)


def test_a_bad_unique_key_is_refused(project: Project) -> None:
    with project.source() as conn:
        conn.execute("create schema dbo")
        conn.execute('create table dbo."Products" ("Id" integer primary key, "Code" text, "Region" text)')
    for unique_keys, message in [
        ("Code;Colour", "unique_keys 'Colour' names unknown column(s) 'Colour'"),
        ("Id", "unique_keys 'Id' is the primary key"),
        ("Code;", "unique_keys names an empty key"),
    ]:
        project.write_sync_tables([f"dbo,Products,,,true,{unique_keys}"], HEADER)
        done = project.cli("--table", "dbo.Products")
        assert done.returncode == 2, unique_keys
        assert message in done.stderr, done.stderr
    assert project.scalar("select count(*) from information_schema.tables where table_name = 'products'") == 0
