"""The merge's plan cannot blow up: repairs mixed with tombstones, at several sizes, are merged by a
statement whose work grows with the batch, whatever the statistics say. The merge statement dbt ran and
the batch view it reads are taken from dbt's target/ folder and run again, under EXPLAIN ANALYZE in a
transaction that is rolled back, over a larger planted batch: once with the statistics tidemark takes
after landing, once with statistics that put the landing tables at one row in a million pages, as if
they were analysed empty: planned with those, the merge before its rewrite ran for as long as it was let
(a nested loop that rescanned a hash of every tombstone for each staged row)."""

from __future__ import annotations

import json
import re
from typing import Any

import psycopg
import pytest
from psycopg import sql

from tests.conftest import Project

ROWS = 30_000
# Every n-th key deleted at the source (a tombstone each) and every m-th changed (a repair each).
PLANTS = {"small": (60, 30), "large": (9, 4)}


@pytest.fixture(scope="module")
def reconciled(tmp_path_factory: pytest.TempPathFactory, pg_admin_url: str, spark: Any) -> Any:
    from tests.conftest import new_project

    with new_project(tmp_path_factory.mktemp("merge-plan") / "project", pg_admin_url, spark) as project:
        with project.source() as conn:
            conn.execute("create schema dbo")
            conn.execute('create table dbo."Items" ("Id" integer primary key, "Name" text, "Amount" numeric(12, 2))')
            conn.execute(
                """insert into dbo."Items" select i, 'item ' || i, i / 7.0 from generate_series(1, %s) as i""",
                (ROWS,),
            )
        project.write_sync_tables(["dbo,Items,,,true"])
        project.generate()
        project.sync_replicas()
        yield project


def _plant(project: Project, every_deleted: int, every_changed: int, offset: int) -> tuple[int, int]:
    with project.source() as conn:
        deleted = conn.execute('delete from dbo."Items" where ("Id" + %s) %% %s = 0', (offset, every_deleted)).rowcount
        changed = conn.execute(
            'update dbo."Items" set "Name" = "Name" || \' changed\' where ("Id" + %s) %% %s = 0',
            (offset, every_changed),
        ).rowcount
    return deleted, changed


def _row_work(node: dict[str, Any]) -> int:
    """Rows every node of an EXPLAIN ANALYZE plan produced, over all its loops."""
    own = int(node.get("Actual Rows", 0) * node.get("Actual Loops", 1))
    return own + sum(_row_work(child) for child in node.get("Plans", []))


def _nested_over_scans(node: dict[str, Any], found: list[str]) -> list[str]:
    """Nested loops whose inner side reads a relation whole on each of several outer rows."""
    plans = node.get("Plans", [])
    if node.get("Node Type") == "Nested Loop" and len(plans) == 2:
        inner = plans[1]
        loops = int(inner.get("Actual Loops", 1))
        scanned = _row_work(inner)
        if loops > 10 and scanned > 20 * loops:
            found.append(f"{node.get('Join Type')} nested loop: {loops} loops over {scanned} inner rows")
    for child in plans:
        _nested_over_scans(child, found)
    return found


def _explain_merge(project: Project, stale_statistics: bool) -> dict[str, Any]:
    root = project.root / "target"
    model = next((root / "run").rglob("*__dbo__items.sql"))
    statement = model.read_text()
    compiled = next((root / "compiled").rglob("*__dbo__items.sql")).read_text()
    view = re.search(r'"(\w+__dbt_tmp\d+)"', statement)
    assert view is not None, statement[:2000]
    names = project.planner.plan(project.planner.find("dbo.Items")).names
    with psycopg.connect(project.target_url) as conn, conn.transaction(force_rollback=True):
        # A plan that blew up would run for an hour: it fails here in a minute (QueryCanceled).
        conn.execute("set local statement_timeout = '60s'")
        if stale_statistics:
            for table in (names.staging_table, names.tombstone_table):
                conn.execute(
                    "select pg_restore_relation_stats('schemaname', %s::text, 'relname', %s::text,"
                    " 'relpages', 1000000::integer, 'reltuples', 1::real)",
                    (names.schema, table),
                )
        conn.execute(sql.SQL("create temporary view {} as ").format(sql.Identifier(view.group(1))) + sql.SQL(compiled))
        row = conn.execute(sql.SQL("explain (analyze, format json) ") + sql.SQL(statement)).fetchone()
    assert row is not None
    plan = row[0] if isinstance(row[0], list) else json.loads(row[0])
    return dict(plan[0]["Plan"])


@pytest.mark.parametrize("stale_statistics", [False, True], ids=["fresh statistics", "stale statistics"])
def test_repairs_mixed_with_tombstones_merge_in_linear_work(reconciled: Project, stale_statistics: bool) -> None:
    # A first reconcile with its merge: dbt's target/ then holds the merge statement and the batch view.
    _plant(reconciled, *PLANTS["small"], offset=int(stale_statistics))
    merged = reconciled.cli("reconcile", "--table", "dbo.Items", "--dbt", "build", "--allow-mass-delete")
    assert merged.returncode == 0, merged.stderr[-3000:]
    # A larger batch landed, not merged: the statement runs again over it.
    deleted, changed = _plant(reconciled, *PLANTS["large"], offset=1 + int(stale_statistics))
    landed = reconciled.cli("reconcile", "--table", "dbo.Items", "--allow-mass-delete")
    assert landed.returncode == 0, landed.stderr[-3000:]
    plan = _explain_merge(reconciled, stale_statistics)
    batch = deleted + changed
    assert batch > 5_000
    assert _nested_over_scans(plan, []) == []
    assert _row_work(plan) < 40 * batch + 3 * ROWS, _row_work(plan)
