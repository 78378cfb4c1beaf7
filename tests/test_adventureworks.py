"""Every AdventureWorks table, loaded into the stand-in source with its SQL Server types, replicates
exactly, first sync and then through rounds of seeded random changes."""

from __future__ import annotations

from extract.devtools.sample import load_sample, sync_table_rows
from extract.project.verify import verify_tables
from extract.source.typemap import TypeMap
from tests.aw_changes import apply_round, make_cursor_nullable
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
    loaded = load_sample(ADVENTUREWORKS, project.settings.source, project.spark, TypeMap(project.root / "seeds"))
    samples = [sample for sample, _ in loaded]
    assert len(loaded) == 68
    assert sum(rows for _, rows in loaded) == 244_068
    project.write_sync_tables(sync_table_rows(samples))
    project.generate()
    project.sync()
    assert verify_all(project) == 244_068
    assert project.scalar("select count(*) from _migration._migration_state where rows_inserted = 0") == 7

    with project.source() as conn:
        make_cursor_nullable(conn, samples)
    rows = 244_068
    for seed in (1, 2, 3):
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
        project.sync()
        rows += made["inserted"]
        assert verify_all(project) == rows, f"round {seed}: {made}"
