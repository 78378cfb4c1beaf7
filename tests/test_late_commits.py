"""Late commits: a row stamped before the extract reads the clock but committed after it."""

from __future__ import annotations

import psycopg
import pytest

from tests.conftest import Project
from tests.demo_fixture import demo

__all__ = ["demo"]

STAMP = "clock_timestamp() at time zone 'UTC'"


def _late_commit_round(project: Project) -> str:
    """Stamp customer 12 in an open transaction, run an extract, commit, then sync twice."""
    replica = f'"demo__{project.source_db}__dbo".customers'
    with psycopg.connect(project.source_url) as late:
        late.execute(f"""update dbo."Customers" set "Name" = 'late', "ModifiedDate" = {STAMP}
            where "CustomerID" = 12""")
        project.extract("dbo.Customers")  # reads the clock after the stamp; cannot see the row yet
        late.commit()
    project.merge()
    assert project.scalar(f"select name from {replica} where customerid = 12") != "late"
    project.sync_replicas()
    return str(project.scalar(f"select name from {replica} where customerid = 12"))


def test_late_commit_within_the_safety_window_is_picked_up(demo: Project) -> None:
    demo.env["TIDEMARK_SAFETY_WINDOW"] = "5m"
    demo.close()
    demo.sync_replicas()
    assert _late_commit_round(demo) == "late"


def test_without_a_window_the_late_commit_is_behind_the_watermark(demo: Project) -> None:
    # The reason the window exists: a filter starting exactly at the watermark skips the row.
    demo.sync_replicas()
    assert _late_commit_round(demo) != "late"
    demo.env["TIDEMARK_SAFETY_WINDOW"] = "1h"
    demo.close()
    demo.sync_replicas()
    assert demo.scalar(f'select name from "demo__{demo.source_db}__dbo".customers where customerid = 12') == "late"


def test_rows_re_read_inside_the_window_count_as_unchanged(demo: Project) -> None:
    demo.env["TIDEMARK_SAFETY_WINDOW"] = "1h"
    demo.close()
    demo.sync_replicas()
    with demo.source() as conn:
        conn.execute(f"""update dbo."Customers" set "Name" = 'fresh', "ModifiedDate" = {STAMP}
            where "CustomerID" in (20, 21)""")
    demo.sync_replicas()
    demo.sync_replicas()  # both rows are re-read again, unchanged
    row = demo.scalar(
        "select array[rows_inserted, rows_updated, rows_unchanged] from _migration.merge_log"
        " where table_key like %s order by merge_id desc limit 1",
        ("%.customers",),
    )
    assert row == [0, 0, 2]


@pytest.mark.parametrize("text", ["5 minutes", "-5m", "5", "m"])
def test_bad_safety_window_is_named(text: str) -> None:
    from extract.config.settings import load_settings
    from extract.core.errors import TidemarkError

    env = {"TIDEMARK_SOURCE_URL": "postgresql://h/s", "TIDEMARK_TARGET_URL": "postgresql://h/t"}
    with pytest.raises(TidemarkError, match=f"TIDEMARK_SAFETY_WINDOW must be a duration .* not '{text}'"):
        load_settings({**env, "TIDEMARK_SAFETY_WINDOW": text})
