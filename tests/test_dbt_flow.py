"""A pass's dbt merges each table as soon as it has landed (runtime/dbt_flow.py): a table the pass says
did not land is skipped with what follows from it, and merged after the landing when it still waits."""

from __future__ import annotations

import json

from extract.core.quoting import postgres_identifier
from extract.state.waiting import tables_waiting
from tests.conftest import Project
from tests.failing_table import items_and_failing
from tests.items_fixture import quoted_replica
from tests.two_tables_waiting import run_script, two_tables_waiting

#: A flowing run started for some models, told which landed, then asked for some: what the pass does, in
#: a fresh interpreter (dbt's process is forked before any thread starts).
_FLOW = """
import json, sys
from extract.config.settings import load_settings
from extract.runtime.dbt_setup import dbt_process

started, landed, asked = (json.loads(argument) for argument in sys.argv[1:4])
dbt = dbt_process(["build"], load_settings())
assert dbt is not None
dbt.start(True, False, started, flow=True)
for model, mergeable in landed:
    dbt.landed(model, mergeable)
print(json.dumps({"ok": dbt.run(True, False, models=asked), "ran_with": dbt.ran_with}))
"""


def _flow(project: Project, started: list[str], landed: list[tuple[str, bool]], asked: list[str]) -> dict[str, object]:
    return run_script(project, _FLOW, started, landed, asked)


def test_a_table_left_out_of_the_flow_is_merged_after_it_when_it_still_waits(project: Project) -> None:
    project.keep_dbt_files()
    items, other, keys = two_tables_waiting(project)
    settings = project.settings

    # Other did not land (as far as this run knows), and the pass does not ask for it: it still waits.
    answer = _flow(project, [items, other], [(items, True), (other, False)], [items])
    assert answer["ok"] is True
    assert tables_waiting(settings.target, settings.state_schema, keys) == {keys[1]}
    results = json.loads((project.root / "target" / "run_results.json").read_text())
    status = {entry["unique_id"].split(".")[-1]: entry["status"] for entry in results["results"]}
    assert status[items] == "success" and status[other] == "skipped", status
    assert status[f"{other}__history"] == "skipped", status  # what follows from it, skipped with it
    assert status["_migration_state"] == "success", status  # it reads every replica: not skipped with one

    # Left out again, but asked for after the landing: merged by a run of its own, after the flow.
    answer = _flow(project, [items, other], [(items, True), (other, False)], [items, other])
    ran_with = answer["ran_with"]
    assert answer["ok"] is True and isinstance(ran_with, list) and f"{other}+" in ran_with, ran_with
    assert not any(items in argument for argument in ran_with), ran_with
    assert tables_waiting(settings.target, settings.state_schema, keys) == set()
    with project.target() as conn:
        merged = conn.execute(f"select count(*) from {quoted_replica(project, 'dbo.Other')}").fetchone()
    assert merged == (20,)


def test_a_table_that_fails_to_land_is_skipped_and_the_others_merged(project: Project) -> None:
    project.keep_dbt_files()
    items_and_failing(project)  # dbo.Dupes: its batch is refused, and its run fails
    result = project.cli("--all", "--dbt", "build")
    assert result.returncode == 1, result.stderr[-3000:]
    assert "1 of 2 table(s) failed: dbo.Dupes" in result.stderr
    results = json.loads((project.root / "target" / "run_results.json").read_text())
    status = {entry["unique_id"].split(".")[-1]: entry["status"] for entry in results["results"]}
    items, dupes = project.model_name("dbo.Items"), project.model_name("dbo.Dupes")
    # The run was started for both before either landed; Dupes was skipped when it failed.
    assert status[items] == "success" and status[dupes] == "skipped", status
    with project.target() as conn:
        assert conn.execute(f"select count(*) from {quoted_replica(project)}").fetchone() == (10,)
        assert conn.execute(f"select count(*) from {quoted_replica(project, 'dbo.Dupes')}").fetchone() == (0,)
        names = project.planner.plan(project.planner.find("dbo.Dupes")).names
        history = f"{postgres_identifier(names.schema)}.{postgres_identifier(names.table + '__history')}"
        assert conn.execute("select to_regclass(%s)", (history,)).fetchone() == (None,), "a history, never landed"
