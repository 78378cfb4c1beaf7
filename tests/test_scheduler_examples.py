"""The Airflow DAG and Dagster assets in docs/examples call the CLI and read its JSON through
docs/examples/tidemark_run.py: that helper, run against the real command, and the JSON contract
(docs/examples/report.schema.json) the examples rely on."""

from __future__ import annotations

import ast
import importlib.util
import json
import sys
from types import ModuleType
from typing import Any

import jsonschema
import pytest

from tests.conftest import REPO, Project
from tests.failing_table import HEADER, items_and_failing

EXAMPLES = REPO / "docs" / "examples"


def _helper() -> ModuleType:
    spec = importlib.util.spec_from_file_location("tidemark_run", EXAMPLES / "tidemark_run.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_examples_read_what_the_command_prints(project: Project) -> None:
    helper = _helper()
    schema = json.loads((EXAMPLES / "report.schema.json").read_text())
    items_and_failing(project, rows=9)
    command = [sys.executable, "-m", "extract"]
    env = {**project.env, "DBT_PROFILES_DIR": str(project.root)}

    with pytest.raises(helper.TidemarkFailed, match=r"tidemark exited 1: .*'dbo\.Dupes': .*more than once"):
        helper.run_tidemark(["--all", "--dbt", "build"], env=env, command=command)

    project.write_sync_tables(["dbo,Items,ModifiedDate,,true"], HEADER)
    report: dict[str, Any] = helper.run_tidemark(["--all", "--dbt", "build"], env=env, command=command)
    jsonschema.validate(report, schema)
    assert helper.summary(report) == {
        "rows_landed": {},
        "unchanged": ["dbo.Items"],  # landed by the pass before, and nothing since
        "failed": {},
        "schema_changes": {},
        "dbt_success": True,
    }
    reconciled = helper.run_tidemark(["reconcile", "--all", "--dbt", "build"], env=env, command=command)
    assert {k: reconciled["tables"][0][k] for k in ("inserted", "updated", "deleted")} == {
        "inserted": 0,
        "updated": 0,
        "deleted": 0,
    }

    with pytest.raises(helper.TidemarkFailed, match=r"tidemark exited 2: .*unknown table 'dbo\.Nope'"):
        helper.run_tidemark(["--table", "dbo.Nope"], env=env, command=command)


def test_the_dag_and_the_assets_use_the_helper_with_commands_that_exist() -> None:
    for name in ("airflow_dag.py", "dagster_assets.py"):
        tree = ast.parse((EXAMPLES / name).read_text())
        calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and getattr(n.func, "id", "") == "run_tidemark"]
        assert calls, name
        for call in calls:
            args = ast.literal_eval(call.args[0])
            assert "--dbt" in args and "--json" not in args, (name, args)  # the helper adds --json
            assert args[0] in ("--all", "reconcile"), (name, args)
