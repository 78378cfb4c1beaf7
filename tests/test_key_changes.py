"""Rows whose primary key changes in the source: moved to their new key when the seed names a
record_id (counted key_changed, their history with them), else deleted and inserted; swaps and
cycles of keys apply in one transaction, through a sync (cursor bumped) or a reconcile (not)."""

from __future__ import annotations

import json

import pytest

from tests.conftest import Project
from tests.items_fixture import quoted_replica
from tests.replica_check import assert_replicas_equal

ROWS = 50
HEADER = "source_schema,source_table,cursor_column,primary_key,enabled,record_id"
#: (old key, new key): one key changed, a swap, and a cycle of three.
MOVES = [(1, 1001), (2, 3), (3, 2), (4, 5), (5, 6), (6, 4)]


def _project(project: Project, record_id: bool) -> Project:
    with project.source() as conn:
        conn.execute("create schema dbo")
        conn.execute(
            """create table dbo."Parts" ("Id" integer primary key, rowguid uuid not null unique,
            "Name" text, "ModifiedDate" timestamp(3))"""
        )
        conn.execute(
            f"""insert into dbo."Parts" select i, gen_random_uuid(), 'part ' || i,
            timestamp '2026-01-01' + i * interval '1 minute' from generate_series(1, {ROWS}) as i"""
        )
    project.write_sync_tables([f"dbo,Parts,ModifiedDate,,true,{'rowguid' if record_id else ''}"], HEADER)
    project.generate()
    project.sync()
    return project


@pytest.fixture(params=[True, False], ids=["record_id", "no_record_id"])
def parts(request: pytest.FixtureRequest, project: Project) -> tuple[Project, bool]:
    return _project(project, request.param), request.param


def _move_keys(project: Project, bump_cursor: bool) -> None:
    """Apply MOVES in the source in one transaction (through negative keys, as the source's primary
    key is checked row by row), the cursor bumped or left where it was."""
    stamp = ", \"ModifiedDate\" = clock_timestamp() at time zone 'UTC'" if bump_cursor else ""
    with project.source() as conn, conn.transaction():
        for old, _ in MOVES:
            conn.execute(f'update dbo."Parts" set "Id" = %s{stamp} where "Id" = %s', (-old, old))
        for old, new in MOVES:
            conn.execute('update dbo."Parts" set "Id" = %s where "Id" = %s', (new, -old))


def _history_follows(project: Project) -> int:
    """Snapshot versions whose key is not their record's key in the replica."""
    replica = quoted_replica(project, "dbo.Parts")
    history = replica[:-1] + '__history"'
    return int(
        project.scalar(f"select count(*) from {history} as h join {replica} as r using (rowguid) where h.id <> r.id")
    )


def _last_merge(project: Project) -> tuple[int, int, int, int]:
    row = None
    with project.target() as conn:
        row = conn.execute(
            "select rows_inserted, rows_updated, rows_deleted, rows_key_changed from _migration.merge_log"
            " order by merge_id desc limit 1"
        ).fetchone()
    assert row is not None
    return tuple(row)  # type: ignore[return-value]


def test_key_changes_reach_the_replica_through_the_sync(parts: tuple[Project, bool]) -> None:
    project, record_id = parts
    _move_keys(project, bump_cursor=True)
    project.sync()
    inserted, updated, deleted, key_changed = _last_merge(project)
    if record_id:
        assert (inserted, updated, deleted, key_changed) == (0, 0, 0, len(MOVES))
        assert project.scalar("select count(*) from _migration.key_change_log") == len(MOVES)
        assert _history_follows(project) == 0
        deferred = "select condeferred from pg_constraint where contype = 'u' and conrelid = %s::regclass"
        assert project.scalar(deferred, (quoted_replica(project, "dbo.Parts"),)) is True
        assert_replicas_equal(project)
        return
    # Without a record id the swapped and cycled keys are updates, the changed key an insert; the old
    # key stays until a reconcile finds it.
    assert (inserted, updated, deleted, key_changed) == (1, 5, 0, 0)
    done = project.cli("reconcile", "--table", "dbo.Parts", "--dbt", "build", "--json")
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(done.stdout)["tables"][0]
    assert result["deleted"] + result["boundary_deleted"] == 1  # key 1 lies below the source's lowest key now
    assert project.scalar("select key->>'id' from _migration.delete_log") == "1"
    assert_replicas_equal(project)


def test_key_changes_the_cursor_missed_are_found_by_a_reconcile(parts: tuple[Project, bool]) -> None:
    project, record_id = parts
    _move_keys(project, bump_cursor=False)
    project.sync()  # sees nothing: no cursor moved
    done = project.cli("reconcile", "--table", "dbo.Parts", "--dbt", "build", "--json")
    assert done.returncode == 0, done.stderr[-2000:]
    inserted, updated, deleted, key_changed = _last_merge(project)
    if record_id:
        assert (inserted, updated, deleted, key_changed) == (0, 0, 0, len(MOVES))
        assert project.scalar("select count(*) from _migration.delete_log") == 0
        assert _history_follows(project) == 0
    else:
        assert (inserted, updated, deleted, key_changed) == (1, 5, 1, 0)
    assert_replicas_equal(project)


def test_a_record_id_outside_the_table_is_refused(project: Project) -> None:
    with project.source() as conn:
        conn.execute("create schema dbo")
        conn.execute('create table dbo."Parts" ("Id" integer primary key, "Name" text)')
    project.write_sync_tables(["dbo,Parts,,,true,rowguid"], HEADER)
    done = project.cli("--table", "dbo.Parts")
    assert done.returncode == 2
    assert "record_id 'rowguid' is not a column of the table" in done.stderr
    project.write_sync_tables(["dbo,Parts,,,true,Id"], HEADER)
    done = project.cli("--table", "dbo.Parts")
    assert done.returncode == 2
    assert "record_id 'Id' is part of the primary key" in done.stderr
    assert project.scalar("select count(*) from information_schema.tables where table_name = 'parts'") == 0
