"""The reconcile's delete guard: deletes are refused only when they are more rows than one setting and a
larger share of the replica than another (or the table's own seed columns). A partial read of the source
is stopped with the defaults; a small table's few deletes are not; a key that a record id shows moved is
not a delete."""

from __future__ import annotations

import pytest

from tests.conftest import Project
from tests.replica_check import assert_replicas_equal

SEED_HEADER = "source_schema,source_table,cursor_column,primary_key,enabled,record_id,max_delete_rows"


def _synced(project: Project, rows: int, record_id: str = "", max_delete_rows: str = "") -> Project:
    with project.source() as conn:
        conn.execute("create schema dbo")
        conn.execute(
            """create table dbo."Items" ("Id" integer primary key, "Guid" uuid not null unique, "Name" text,
            "ModifiedDate" timestamp(3))"""
        )
        conn.execute(
            """insert into dbo."Items" select i, md5(i::text)::uuid, 'item ' || i,
            timestamp '2026-01-01' + i * interval '1 minute' from generate_series(1, %s) as i""",
            (rows,),
        )
    project.write_sync_tables([f"dbo,Items,ModifiedDate,Id,true,{record_id},{max_delete_rows}"], SEED_HEADER)
    project.generate()
    project.sync_replicas()
    return project


def _replica_rows(project: Project) -> int:
    plan = project.planner.plan(project.planner.find("dbo.Items"))
    return int(project.scalar(f'select count(*) from "{plan.names.schema}"."{plan.names.table}"') or 0)


def _nothing_landed(project: Project) -> None:
    assert project.scalar("select count(*) from _migration.pending_runs") == 0
    assert project.scalar("select count(*) from _migration.delete_log") == 0


def _reconcile(project: Project, *args: str) -> tuple[int, str]:
    done = project.cli("reconcile", "--table", "dbo.Items", "--dbt", "build", *args)
    return done.returncode, done.stderr


def _refused(project: Project, message: str, rows: int) -> None:
    """The reconcile is refused, saying `message` and how to allow it, and changes nothing."""
    code, stderr = _reconcile(project)
    assert code == 1, stderr[-2000:]
    assert message in stderr and "--allow-mass-delete" in stderr, stderr[-2000:]
    _nothing_landed(project)
    assert _replica_rows(project) == rows


def test_a_small_table_s_few_deletes_pass_the_default_guard(project: Project) -> None:
    synced = _synced(project, 100)
    with synced.source() as conn:
        conn.execute('delete from dbo."Items" where "Id" <= 20')  # 20% of the table, 20 rows
    code, stderr = _reconcile(synced)
    assert code == 0, stderr[-2000:]
    assert _replica_rows(synced) == 80
    assert synced.scalar("select count(*) from _migration.delete_log") == 20
    assert_replicas_equal(synced)


def test_a_partial_read_is_refused_with_the_default_guard(project: Project) -> None:
    synced = _synced(project, 1000)
    with synced.source() as conn:  # the source now shows half its rows, as a filter or a permission would
        conn.execute('alter table dbo."Items" rename to "AllItems"')
        conn.execute('create view dbo."Items" as select * from dbo."AllItems" where "Id" % 2 = 0')
    _refused(
        synced, "500 of the replica's 1,000 rows (50.0%) would be deleted, more than 100 rows and more than 10%", 1000
    )


def test_a_table_s_own_guard_refuses_until_allowed(project: Project) -> None:
    synced = _synced(project, 100, max_delete_rows="10")
    with synced.source() as conn:
        conn.execute('delete from dbo."Items" where "Id" <= 20')
    _refused(synced, "20 of the replica's 100 rows (20.0%) would be deleted, more than 10 rows and more than", 100)
    code, stderr = _reconcile(synced, "--allow-mass-delete")
    assert code == 0, stderr[-2000:]
    assert _replica_rows(synced) == 80
    assert synced.scalar("select count(*) from _migration.delete_log") == 20
    assert_replicas_equal(synced)


@pytest.mark.parametrize("record_id", ["Guid", ""])
def test_keys_a_record_id_shows_moved_are_not_deletes(project: Project, record_id: str) -> None:
    synced = _synced(project, 1000, record_id=record_id)
    with synced.source() as conn:  # 15% of the keys change, their cursor kept: only a reconcile sees it
        conn.execute('update dbo."Items" set "Id" = "Id" + 100000 where "Id" <= 150')
    if not record_id:
        _refused(synced, "150 of the replica's 1,000 rows (15.0%) would be deleted", 1000)
        return
    code, stderr = _reconcile(synced)
    assert code == 0, stderr[-2000:]
    assert synced.scalar("select count(*) from _migration.key_change_log") == 150
    assert synced.scalar("select count(*) from _migration.delete_log") == 0
    assert_replicas_equal(synced)
