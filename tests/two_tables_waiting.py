"""Two tables landed and waiting for a merge (dbo.Items and dbo.Other), and a pass's dbt driven by a
script in a fresh interpreter (dbt's process is forked before any thread starts): for the tests of a
run started while the tables land, held or flowing."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from tests.conftest import REPO, Project
from tests.items_fixture import items_table

_OTHER = """
create table dbo."Other" ("Id" integer primary key, "Name" text, "ModifiedDate" timestamp(3));
insert into dbo."Other" select i, 'other ' || i, timestamp '2026-01-01' + i * interval '1 minute'
from generate_series(1, 20) as i
"""


def two_tables_waiting(project: Project) -> tuple[str, str, list[str]]:
    """Items (30 rows) and Other (20) landed, neither merged: their models, and their table keys."""
    items_table(project, 30)
    with project.source() as conn:
        conn.execute(_OTHER)
    project.write_sync_tables(["dbo,Items,ModifiedDate,,true", "dbo,Other,ModifiedDate,,true"])
    project.generate()
    assert project.cli("--all").returncode == 0
    keys = [project.planner.plan(project.planner.find(t)).names.table_key for t in ("dbo.Items", "dbo.Other")]
    return project.model_name("dbo.Items"), project.model_name("dbo.Other"), keys


def run_script(project: Project, script: str, *values: object) -> dict[str, object]:
    """What `script` printed last, as JSON, run with `values` (as JSON) in the project's environment."""
    env = {**os.environ, **project.env, "DBT_PROFILES_DIR": str(project.root)}
    result = subprocess.run(
        [sys.executable, "-c", script, *(json.dumps(value) for value in values)],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    answer: dict[str, object] = json.loads(result.stdout.strip().splitlines()[-1])
    return answer
