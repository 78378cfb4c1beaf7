"""A reconcile keeps the replica's figures of its first level: the next one hashes again only the ranges
whose rows were written since, by a merge or by hand, and none of a table given a new file."""

from __future__ import annotations

import pytest

from extract.reconcile.result import ReconcileOptions
from tests.conftest import Project
from tests.items_fixture import quoted_replica
from tests.reconcile_notes import changes, reconcile_items
from tests.replica_check import assert_replicas_equal

ROWS = 1_000
#: The range of the source's highest key is hashed again every time: its limit moves with new keys.
KEPT_ALL = "the replica's figures of 62 of 63 ranges kept from its last reconcile; 1 hashed again"


@pytest.fixture
def synced(project: Project) -> Project:
    _source(project)
    project.sync_replicas()
    return project


def _source(project: Project) -> None:
    # 63 ranges of 16 keys at the first level.
    project.env.update({"TIDEMARK_RECONCILE_FACTOR": "4", "TIDEMARK_RECONCILE_LEAF_ROWS": "8"})
    with project.source() as conn:
        conn.execute("create schema dbo")
        conn.execute(
            """create table dbo."Items" ("Id" integer primary key, "Name" text, "Price" numeric(9, 2),
            "ModifiedDate" timestamp(3))"""
        )
        conn.execute(
            f"""insert into dbo."Items" select i, 'item ' || i, i / 4.0,
            timestamp '2026-01-01' + i * interval '1 minute' from generate_series(1, {ROWS}) as i"""
        )
    project.write_sync_tables(["dbo,Items,ModifiedDate,,true"])
    project.generate()


def _kept(notes: list[str]) -> list[str]:
    return [n for n in notes if n.startswith("the replica's figures of")]


def test_only_ranges_written_since_are_hashed_again(synced: Project) -> None:
    first, notes = reconcile_items(synced)
    assert (first.status, _kept(notes)) == ("exact", [])  # nothing kept yet: every range hashed
    again, notes = reconcile_items(synced)
    assert (again.status, _kept(notes)) == (
        "exact",
        [KEPT_ALL],
    )
    with synced.source() as conn:  # the cursor kept: only a reconcile sees these
        conn.execute("""update dbo."Items" set "Name" = 'backdated' where "Id" = 100""")
        conn.execute('delete from dbo."Items" where "Id" = 500')
        conn.execute("""insert into dbo."Items" values (1001, 'late', 1, timestamp '2026-01-01')""")
    repaired, notes = reconcile_items(synced)
    assert changes(repaired) == (1, 1, 1)
    assert _kept(notes) == [KEPT_ALL]
    after, notes = reconcile_items(synced)  # the merge wrote three ranges of the replica, the highest key's too
    assert after.status == "exact"
    assert _kept(notes) == ["the replica's figures of 60 of 63 ranges kept from its last reconcile; 3 hashed again"]
    assert_replicas_equal(synced)


def test_rows_written_by_hand_in_the_replica_are_found(synced: Project) -> None:
    """Whoever writes a row gives it a new version: figures kept from before it are not used."""
    reconcile_items(synced)
    replica = quoted_replica(synced)
    with synced.target() as conn:
        conn.execute(f"""update {replica} set "name" = 'by hand' where "id" = 10""")
        conn.execute(f"""update {replica} set "price" = "price" where "id" = 20""")  # a new version, same values
        conn.execute(f'delete from {replica} where "id" = 400')
        # The same count, the same key, another row.
        conn.execute(f'create temporary table was as select * from {replica} where "id" = 300')
        conn.execute(f'delete from {replica} where "id" = 300')
        conn.execute(f"""insert into {replica} select * from was""")
        conn.execute(f"""update {replica} set "name" = 'again' where "id" = 300""")
    repaired, notes = reconcile_items(synced)
    assert changes(repaired) == (1, 2, 0)
    assert _kept(notes) == ["the replica's figures of 58 of 63 ranges kept from its last reconcile; 5 hashed again"]
    assert_replicas_equal(synced)


def test_a_table_given_a_new_file_keeps_no_figures(synced: Project) -> None:
    reconcile_items(synced)
    with synced.target() as conn:
        conn.execute(f"vacuum full {quoted_replica(synced)}")
    result, notes = reconcile_items(synced)
    assert (result.status, _kept(notes)) == ("exact", [])


def test_a_dry_run_keeps_nothing(synced: Project) -> None:
    plan = synced.planner.plan(synced.planner.find("dbo.Items"))
    reconcile_items(synced, ReconcileOptions(dry_run=True))
    kept = synced.scalar("select to_regclass(%s)::text", (f'"{plan.names.schema}"."{plan.names.kept_figures_table}"',))
    assert kept is None
    reconcile_items(synced)
    assert synced.scalar(f'select count(*) from "{plan.names.schema}"."{plan.names.kept_figures_table}"') == 63


def test_a_large_first_sync_keeps_the_figures_for_the_firstreconcile_items(project: Project) -> None:
    _source(project)
    project.env["TIDEMARK_RECONCILE_PRIME_ROWS"] = str(ROWS)  # a table of ROWS rows is large
    project.dbt("seed")
    synced = project.cli("--table", "dbo.Items", "--dbt", "run --select replica state")
    assert synced.returncode == 0, synced.stderr[-2000:]
    assert "dbo.Items: the replica's figures of 63 ranges kept for its first reconcile" in synced.stderr
    first, notes = reconcile_items(project)
    assert (first.status, _kept(notes)) == ("exact", [KEPT_ALL])
    with project.source() as conn:
        conn.execute("""update dbo."Items" set "Name" = 'backdated' where "Id" = 100""")
    again = project.cli("--table", "dbo.Items", "--dbt", "run --select replica state")
    assert again.returncode == 0, again.stderr[-2000:]
    assert "kept for its first reconcile" not in again.stderr  # a first sync only
    repaired, notes = reconcile_items(project)
    assert changes(repaired) == (0, 1, 0)
    assert_replicas_equal(project)


def test_a_small_first_sync_keeps_nothing(project: Project) -> None:
    _source(project)
    project.dbt("seed")
    synced = project.cli("--table", "dbo.Items", "--dbt", "run --select replica state")
    assert synced.returncode == 0, synced.stderr[-2000:]
    plan = project.planner.plan(project.planner.find("dbo.Items"))
    kept = f'"{plan.names.schema}"."{plan.names.kept_figures_table}"'
    assert project.scalar("select to_regclass(%s)::text", (kept,)) is None


def test_a_replica_written_in_most_ranges_is_hashed_in_one_scan(synced: Project) -> None:
    reconcile_items(synced)
    with synced.target() as conn:
        conn.execute(f'update {quoted_replica(synced)} set "price" = "price" where "id" % 2 = 0')  # in every range
        conn.execute(f"""update {quoted_replica(synced)} set "name" = 'by hand' where "id" = 999""")
    repaired, notes = reconcile_items(synced)
    assert changes(repaired) == (0, 1, 0)
    assert _kept(notes) == ["the replica's figures of 0 of 63 ranges kept from its last reconcile; 63 hashed again"]
    assert_replicas_equal(synced)


def test_new_keys_beyond_the_replicas_ranges_are_counted_as_no_range_of_it(synced: Project) -> None:
    reconcile_items(synced)
    with synced.source() as conn:  # stamped in the past: only a reconcile sees them
        conn.execute(
            """insert into dbo."Items" select i, 'late ' || i, 1, timestamp '2026-01-01'
            from generate_series(1001, 1020) as i"""
        )
    repaired, notes = reconcile_items(synced)  # the highest key's range (keys 1009 to 1024) holds no replica row
    assert changes(repaired) == (20, 0, 0)
    assert _kept(notes) == ["the replica's figures of 63 of 63 ranges kept from its last reconcile; 0 hashed again"]
    assert_replicas_equal(synced)
