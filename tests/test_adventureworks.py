"""Every AdventureWorks table, loaded into the stand-in source with its SQL Server types, replicates
exactly, first sync and then through rounds of seeded random changes: those a watermark sees (synced),
then those it cannot see (hard deletes of 2% of each table's rows, backdated updates, key changes
and swaps; synced, then reconciled under the reconcile's default guard), with a record id (rowguid) on
the tables that have one. Then, with Change Tracking enabled on every table, the same kinds of changes
by syncs alone."""

from __future__ import annotations

from collections import Counter

from extract.devtools.change_tracking import enable_change_tracking, install_change_tracking
from extract.devtools.sample import SampleTable, load_sample, sync_table_rows
from extract.project.verify import verify_tables
from extract.source.typemap import TypeMap
from tests.aw_changes import RECORD_ID, apply_round, make_cursor_nullable
from tests.aw_hard_changes import apply_hard_round
from tests.conftest import DATASETS, Project
from tests.replica_check import assert_replicas_equal

ADVENTUREWORKS = DATASETS / "adventureworks"


def verify_all(project: Project) -> int:
    """The verify command's checks and an independent row-by-row comparison; returns the rows compared."""
    plans = [project.planner.plan(c) for c in project.planner.enabled_tables()]
    verified = verify_tables(project.planner, plans)
    assert [v.table for v in verified if not v.ok] == []
    compared = assert_replicas_equal(project)
    assert sum(v.replica_rows or 0 for v in verified) == compared
    return compared


def test_adventureworks_replicates_exactly_through_random_changes(project: Project) -> None:
    loaded = load_sample(ADVENTUREWORKS, project.settings.source, TypeMap(project.root / "seeds"))
    samples = [sample for sample, _ in loaded]
    assert len(loaded) == 68
    assert sum(rows for _, rows in loaded) == 244_068
    with_record_id = {s.table.qualified for s in samples if s.table.column(RECORD_ID) is not None}
    project.write_sync_tables(
        [
            f"{row},{RECORD_ID if sample.table.qualified in with_record_id else ''}"
            for row, sample in zip(sync_table_rows(samples), samples, strict=True)
        ],
        "source_schema,source_table,cursor_column,primary_key,enabled,record_id",
    )
    project.generate()
    project.sync_replicas()
    assert verify_all(project) == 244_068
    assert project.scalar("select count(*) from _migration._migration_state where rows_inserted = 0") == 7

    with project.source() as conn:
        make_cursor_nullable(conn, samples)
    rows = 244_068
    # One round a watermark sees; the hard rounds below sync incrementally again before they reconcile.
    for seed in (1,):
        with project.target() as conn:
            watermarks = {
                f"{schema}.{table}": mark
                for schema, table, mark in conn.execute(
                    "select source_schema, source_table, last_sync_watermark from _migration._migration_state"
                ).fetchall()
            }
        with project.source() as conn:
            made = apply_round(conn, samples, watermarks, seed)
        assert min(made.values()) > 0, made
        project.sync_replicas()
        rows += made["inserted"]
        assert verify_all(project) == rows, f"round {seed}: {made}"

    with project.source() as conn:
        by_table = apply_hard_round(conn, samples, 4, with_record_id)
    made = sum(by_table.values(), Counter[str]())
    assert len(made) == 6 and min(made.values()) > 0, made
    logged_before = _logged(project)
    project.sync_replicas()
    # The reconcile's merge builds everything: histories and tests too. Its default guard lets 2% go.
    done = project.cli("reconcile", "--all", "--dbt", "build", "--parallel", "2", "--quiet")
    assert done.returncode == 0, done.stderr[-3000:]
    rows -= made["deleted"]
    assert verify_all(project) == rows, f"round 4: {made}"
    _check_key_changes(project, by_table, logged_before, with_record_id)
    _with_change_tracking(project, samples, with_record_id, rows)


def _check_key_changes(
    project: Project,
    by_table: dict[str, Counter[str]],
    logged_before: dict[str, Counter[str]],
    with_record_id: set[str],
) -> None:
    """Without a record id a changed key is a delete and an insert, a swap two updates. With one, each is
    a move; except when the sync's batch held one row of a swap only (its cursor NULL, so read every
    time): that row moves, and the other, pushed off its key, is deleted, then landed again at its new
    key by the reconcile."""
    logged = _logged(project)
    for table, counts in by_table.items():
        key = _table_key(project, table)
        deletes, moves = (logged[kind][key] - logged_before[kind][key] for kind in ("deleted", "moved"))
        displaced = deletes - counts["deleted"] - counts["key changed"]
        assert displaced >= 0, (table, counts, deletes)
        assert displaced == 0 or table in with_record_id, (table, counts, deletes)
        moved = counts["key changed (record_id)"] + counts["keys swapped (record_id)"]
        assert moves + displaced == moved, (table, counts, deletes, moves)


def _with_change_tracking(project: Project, samples: list[SampleTable], with_record_id: set[str], rows: int) -> None:
    """Change Tracking switched on for every table: the next sync reads each whole once; from then on
    syncs alone, with no reconcile, bring what a watermark cannot see, and read only the keys that
    changed."""
    with project.source() as conn:
        install_change_tracking(conn)
        for sample in samples:
            enable_change_tracking(conn, sample.table.schema, sample.table.name)
    project.close()  # planned again: Change Tracking reads every table now
    assert {r.migration_type for r in project.extract()} == {"full"}
    project.merge()
    assert project.scalar("select array_agg(distinct reader) from _migration.stream_state") == ["change_tracking"]
    # The first round makes changes a watermark sees and changes it cannot, the second only the latter.
    for seed, seen in ((5, True), (6, False)):
        with project.source() as conn:
            seen_made = apply_round(conn, samples, {}, seed) if seen else Counter[str]()
            by_table = apply_hard_round(conn, samples, seed, with_record_id)
        made = sum(by_table.values(), Counter[str]())
        results = project.extract()
        assert {r.migration_type for r in results} == {"incremental"}
        # Only the keys that changed and are still there are read: the rows a watermark sees, the ones
        # backdated, the new keys of changed ones and both rows of each swap (a key the first round
        # changed twice is read once).
        read = sum(seen_made[k] for k in ("updated", "set to a NULL cursor", "inserted"))
        read += sum(count for kind, count in made.items() if kind != "deleted")
        landed = sum(r.rows_landed for r in results)
        assert landed <= read if seen else landed == read, made
        project.merge()
        rows += seen_made["inserted"] - made["deleted"]
        assert verify_all(project) == rows, f"round {seed}: {made}"


def _table_key(project: Project, table: str) -> str:
    return project.planner.plan(project.planner.find(table)).names.table_key


def _logged(project: Project) -> dict[str, Counter[str]]:
    """Per table key: rows in the delete log and in the key change log."""
    logged: dict[str, Counter[str]] = {}
    with project.target() as conn:
        for kind, log in (("deleted", "delete_log"), ("moved", "key_change_log")):
            rows = conn.execute(f"select table_key, count(*) from _migration.{log} group by table_key").fetchall()
            logged[kind] = Counter({str(key): int(count) for key, count in rows})
    return logged
