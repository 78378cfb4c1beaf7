"""Every AdventureWorks table, loaded into the stand-in source with its SQL Server types, replicates exactly."""

from __future__ import annotations

from extract.sample import load_sample, sync_table_rows
from extract.typemap import TypeMap
from extract.verify import verify_tables
from tests.conftest import DATASETS, Project
from tests.replica_check import assert_replicas_equal

ADVENTUREWORKS = DATASETS / "adventureworks"


def test_every_adventureworks_table_replicates_exactly(project: Project) -> None:
    loaded = load_sample(ADVENTUREWORKS, project.settings.source, project.spark, TypeMap(project.root / "seeds"))
    assert len(loaded) == 68
    assert sum(rows for _, rows in loaded) == 244_068
    project.write_sync_tables(sync_table_rows(sample for sample, _ in loaded))
    project.generate()
    project.sync()
    assert assert_replicas_equal(project) == 244_068
    plans = [project.extractor.plan(c) for c in project.extractor.enabled_tables()]
    verified = verify_tables(project.extractor, plans)
    assert [v.table for v in verified if not v.ok] == []
    assert sum(v.replica_rows or 0 for v in verified) == 244_068
    empty = project.scalar("select count(*) from _migration._migration_state where rows_inserted = 0")
    assert empty == 7
