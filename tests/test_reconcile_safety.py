"""What a reconcile refuses, reports and leaves alone: an empty source, NULL keys, runs that wait for a
merge, recent changes (the sync's), and a dry run. The delete guard has tests of its own
(test_reconcile_guard.py)."""

from __future__ import annotations

import json

import pytest

from extract.core.errors import KeyValueRefused
from extract.core.observer import Event, Note, Observer
from extract.readers.reconcile_repairs import reconcile_table
from extract.reconcile.result import ReconcileOptions
from tests.conftest import Project
from tests.replica_check import assert_replicas_equal

ROWS = 100


@pytest.fixture
def synced(project: Project) -> Project:
    with project.source() as conn:
        conn.execute("create schema dbo")
        conn.execute(
            """create table dbo."Items" ("Id" integer primary key, "Name" text, "ModifiedDate" timestamp(3))"""
        )
        conn.execute(
            f"""insert into dbo."Items" select i, 'item ' || i, timestamp '2026-01-01' + i * interval '1 minute'
            from generate_series(1, {ROWS}) as i"""
        )
    project.write_sync_tables(["dbo,Items,ModifiedDate,,true"])
    project.generate()
    project.sync_replicas()
    return project


def _replica_rows(project: Project) -> int:
    return int(project.scalar(f"select count(*) from {_replica(project)}") or 0)


def _replica(project: Project) -> str:
    plan = project.planner.plan(project.planner.find("dbo.Items"))
    return f'"{plan.names.schema}"."{plan.names.table}"'


def _nothing_landed(project: Project) -> None:
    assert project.scalar("select count(*) from _migration.pending_runs") == 0
    assert project.scalar("select count(*) from _migration.delete_log") == 0


def test_an_empty_source_is_refused(synced: Project) -> None:
    with synced.source() as conn:
        conn.execute('delete from dbo."Items"')
    refused = synced.cli("reconcile", "--table", "dbo.Items", "--dbt", "build")
    assert refused.returncode == 1
    assert "the source returned no rows and the replica holds 100" in refused.stderr
    _nothing_landed(synced)
    assert _replica_rows(synced) == ROWS


def test_a_dry_run_reports_and_lands_nothing(synced: Project) -> None:
    with synced.source() as conn:
        conn.execute('delete from dbo."Items" where "Id" = 7')
        conn.execute("""update dbo."Items" set "Name" = 'backdated' where "Id" in (8, 9)""")  # cursor kept
        conn.execute("""insert into dbo."Items" values (500, 'late', timestamp '2026-01-01')""")
    withheld = synced.cli("reconcile", "--table", "dbo.Items", "--dry-run", "--json")
    assert withheld.returncode == 0, withheld.stderr[-2000:]
    samples = json.loads(withheld.stdout)["tables"][0]["samples"]  # key values only with --verbose
    assert samples == {
        kind: f"{n} key(s): --verbose shows them" for kind, n in (("inserted", 1), ("updated", 2), ("deleted", 1))
    }
    done = synced.cli("reconcile", "--table", "dbo.Items", "--dry-run", "--json", "--verbose")
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(done.stdout)["tables"][0]
    assert (result["status"], result["inserted"], result["updated"], result["deleted"]) == ("reported", 1, 2, 1)
    assert result["boundary_deleted"] == 0  # 7 lies inside the source's key range: the bisection finds it
    assert result["samples"]["inserted"] == ["500"]
    assert result["samples"]["deleted"] == ["7"]
    assert sorted(result["samples"]["updated"]) == ["8", "9"]
    _nothing_landed(synced)
    status = synced.scalar("select status from _migration.runs where migration_type = 'reconcile'")
    assert status == "reported"


def test_recent_changes_are_left_to_the_sync(synced: Project) -> None:
    with synced.source() as conn:
        conn.execute("""update dbo."Items" set "Name" = 'backdated' where "Id" = 3""")
        conn.execute(
            """update dbo."Items" set "Name" = 'recent',
            "ModifiedDate" = cast(clock_timestamp() at time zone 'UTC' as timestamp(3)) where "Id" = 4"""
        )
    done = synced.cli("reconcile", "--table", "dbo.Items", "--json", "--dbt", "build")
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(done.stdout)["tables"][0]
    assert (result["updated"], result["left_to_sync"]) == (1, 1)
    assert synced.scalar(f'select "name" from {_replica(synced)} where "id" = 4') == "item 4"
    synced.sync_replicas()
    assert_replicas_equal(synced)


def test_runs_waiting_for_a_merge_are_merged_first_or_refused(synced: Project) -> None:
    with synced.source() as conn:
        conn.execute(
            """update dbo."Items" set "Name" = 'new',
            "ModifiedDate" = cast(clock_timestamp() at time zone 'UTC' as timestamp(3)) where "Id" = 5"""
        )
        conn.execute('delete from dbo."Items" where "Id" = 6')
    synced.extract()
    refused = synced.cli("reconcile", "--table", "dbo.Items")
    assert refused.returncode == 1
    assert "wait for a merge" in refused.stderr and "dbt build first" in refused.stderr
    done = synced.cli("reconcile", "--table", "dbo.Items", "--dbt", "build", "--json")
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(done.stdout)
    assert report["dbt"]["runs"] == 2  # the pending run merged, then the repair applied
    assert report["tables"][0]["deleted"] == 1
    assert_replicas_equal(synced)


def _loose(project: Project, rows: str, then: str) -> None:
    """dbo.Loose, a key the source does not enforce, synced with `rows` (a query); then `then` in the source."""
    with project.source() as conn:
        conn.execute("create schema dbo")
        conn.execute("""create table dbo."Loose" ("Code" text, "Name" text)""")
        conn.execute(f"""insert into dbo."Loose" {rows}""")
    project.write_sync_tables(["dbo,Loose,,Code,true"])
    project.generate()
    project.sync_replicas()
    with project.source() as conn:
        conn.execute(then)


def test_a_null_key_is_refused(project: Project) -> None:
    _loose(project, "values ('a', 'x'), ('b', 'y')", """insert into dbo."Loose" values (null, 'z')""")
    refused = project.cli("reconcile", "--table", "dbo.Loose", "--dbt", "build")
    assert refused.returncode == 1
    assert "1 source row(s) have a NULL in a key column (Code)" in refused.stderr
    assert project.scalar("select count(*) from _migration.pending_runs") == 0


def test_a_key_the_source_holds_twice_is_refused(project: Project) -> None:
    """Pairs are matched in the JVM: a key held twice by a source that does not enforce it is named
    (with --verbose) and nothing lands."""
    _loose(
        project,
        "select 'k' || i, 'x' from generate_series(1, 50) as i",
        """insert into dbo."Loose" values ('k7', 'again')""",
    )
    refused = project.cli("reconcile", "--table", "dbo.Loose", "--dbt", "build", "--verbose")
    assert refused.returncode == 1
    assert "the source holds the key ('k7') more than once" in refused.stderr, refused.stderr[-2000:]
    assert project.scalar("select count(*) from _migration.pending_runs") == 0


def test_a_sync_with_reconcile_repairs_what_the_watermark_missed(synced: Project) -> None:
    with synced.source() as conn:
        conn.execute('delete from dbo."Items" where "Id" = 50')
        conn.execute("""update dbo."Items" set "Name" = 'restored' where "Id" = 51""")
    done = synced.cli("--table", "dbo.Items", "--dbt", "build", "--reconcile", "--json")
    assert done.returncode == 0, done.stderr[-2000:]
    reconciled = json.loads(done.stdout)["reconcile"]["tables"][0]
    assert (reconciled["updated"], reconciled["deleted"]) == (1, 1)
    assert_replicas_equal(synced)


def test_the_merge_is_planned_with_the_landed_batch_s_statistics(synced: Project) -> None:
    """Staging (never analysed by autovacuum) and the tombstones are analysed once landed: planned with
    an earlier batch's figures, the merge's anti-joins ran as nested loops over the batch."""
    with synced.source() as conn:
        conn.execute('delete from dbo."Items" where "Id" between 30 and 35')
        conn.execute("""update dbo."Items" set "Name" = 'restored' where "Id" between 40 and 43""")
    done = synced.cli("reconcile", "--table", "dbo.Items")
    assert done.returncode == 0, done.stderr[-2000:]
    plan = synced.planner.plan(synced.planner.find("dbo.Items"))
    with synced.target() as conn:
        figures = dict(
            conn.execute(
                "select c.relname, c.reltuples from pg_class as c join pg_namespace as n on n.oid = c.relnamespace"
                " where n.nspname = %s and c.relname in (%s, %s)",
                (plan.names.schema, plan.names.staging_table, plan.names.tombstone_table),
            ).fetchall()
        )
    assert figures == {plan.names.staging_table: 4, plan.names.tombstone_table: 6}


def _changed_once_compared(project: Project, change: str) -> Observer:
    """An observer that runs `change` in the source once the pairs have been compared: between the
    comparison and the re-read of the rows to repair."""
    done: list[str] = []

    def observe(event: Event) -> None:
        if isinstance(event, Note) and "compared key by key" in event.text and not done:
            with project.source() as conn:
                conn.execute(change)
            done.append(event.text)

    return observe


def test_a_row_that_changes_before_its_re_read_is_refused(synced: Project) -> None:
    with synced.source() as conn:
        conn.execute("""update dbo."Items" set "Name" = 'backdated' where "Id" in (8, 9)""")  # cursor kept
    planner = synced.planner
    plan = planner.plan(planner.find("dbo.Items"))
    again = _changed_once_compared(synced, """update dbo."Items" set "Name" = 'again' where "Id" = 9""")
    with pytest.raises(KeyValueRefused, match="1 re-read row\\(s\\) do not hash as the rows compared"):
        reconcile_table(planner.context, plan, ReconcileOptions(), again)
    _nothing_landed(synced)
    assert synced.scalar(f'select count(*) from {_replica(synced)} where "name" <> \'item \' || "id"') == 0


def test_a_row_deleted_before_its_re_read_is_left_to_the_next_reconcile(synced: Project) -> None:
    with synced.source() as conn:
        conn.execute("""update dbo."Items" set "Name" = 'backdated' where "Id" in (8, 9)""")
        conn.execute('delete from dbo."Items" where "Id" = 20')
    planner = synced.planner
    plan = planner.plan(planner.find("dbo.Items"))
    gone = _changed_once_compared(synced, 'delete from dbo."Items" where "Id" = 9')
    result = reconcile_table(planner.context, plan, ReconcileOptions(), gone)
    assert (result.status, result.updated, result.deleted, result.vanished) == ("landed", 2, 1, 1)
    assert result.rows_landed == 1
    synced.merge()
    assert synced.scalar(f'select "name" from {_replica(synced)} where "id" = 8') == "backdated"
    assert synced.scalar(f'select count(*) from {_replica(synced)} where "id" in (9, 20)') == 1  # 9, unrepaired
    done = synced.cli("reconcile", "--table", "dbo.Items", "--dbt", "build", "--json")
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout)["tables"][0]["deleted"] == 1
    assert_replicas_equal(synced)
