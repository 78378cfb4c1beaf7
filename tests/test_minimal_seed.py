"""The seed as the README documents its minimum, the two required columns, syncs end to end, with the
README's command and without a warning."""

from __future__ import annotations

from tests.conftest import Project
from tests.demo_fixture import demo
from tests.replica_check import assert_replicas_equal

__all__ = ["demo"]


def test_a_seed_with_only_the_required_columns_syncs_and_builds(demo: Project) -> None:
    (demo.root / "seeds" / "sync_tables.csv").write_text("source_schema,source_table\ndbo,Customers\ndbo,Orders\n")
    demo.close()
    demo.generate()
    done = demo.cli("--all", "--dbt", "build")
    output = done.stdout + done.stderr
    assert done.returncode == 0, output[-3000:]
    assert "warning" not in output.lower(), output[-3000:]  # none from dbt, its seed load or its parse
    assert_replicas_equal(demo)
    states = demo.scalar(
        "select string_agg(source_table || ':' || enabled || ':' || sync_status, ',' order by source_table)"
        " from _migration._migration_state"
    )
    assert states == "Customers:true:success,Orders:true:success"
