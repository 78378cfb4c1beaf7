"""`status` for people and schedulers: the state per table with its error, end time and duration;
`--history [TABLE]` with each run's kind, status, rows, merge counts, durations and error; `--json`."""

from __future__ import annotations

import json
from typing import Any

from tests.conftest import Project
from tests.failing_table import items_and_failing


def test_status_shows_the_state_and_the_history_of_runs(project: Project) -> None:
    # Dupes is keyed on a column that repeats: its batch is refused, and its run fails.
    items_and_failing(project)
    assert project.cli("--all", "--dbt", "build", "--quiet").returncode == 1
    with project.source() as conn:
        conn.execute(
            """update dbo."Items" set "Name" = 'changed', "ModifiedDate" = clock_timestamp() at time zone 'UTC'
            where "Id" = 4"""
        )
    assert project.cli("--table", "dbo.Items", "--dbt", "build", "--quiet").returncode == 0
    # Every command leaves what it did under target/, as dbt does.
    synced = _run_results(project)
    assert synced["command"] == "sync" and synced["exit_code"] == 0 and synced["error"] is None
    assert synced["args"] == ["--table", "dbo.Items", "--dbt", "build", "--quiet"]
    assert [t["table"] for t in synced["report"]["tables"]] == ["dbo.Items"]
    assert synced["report"]["tables"][0]["rows_landed"] == 1 and synced["report"]["dbt"]["success"]

    state = json.loads(_status(project, "--json"))
    by_table = {row["table"]: row for row in state["tables"]}
    items, dupes = by_table["dbo.Items"], by_table["dbo.Dupes"]
    assert (items["sync_status"], items["migration_type"], items["rows_updated"]) == ("success", "incremental", 1)
    assert items["sync_duration_seconds"] > 0 and items["last_sync_end"] and items["error_message"] is None
    assert dupes["sync_status"] == "failed" and "more than once" in dupes["error_message"], dupes

    history = json.loads(_status(project, "--history", "--json"))["runs"]
    seen = [(r["table"], r["kind"], r["status"]) for r in history]
    assert seen[0] == ("dbo.Items", "incremental", "merged")
    assert sorted(seen[1:]) == [("dbo.Dupes", "full", "failed"), ("dbo.Items", "full", "merged")], history
    latest = history[0]
    assert (latest["rows_landed"], latest["rows_updated"], latest["rows_unchanged"]) == (1, 1, 0)
    assert latest["landing_seconds"] >= 0 and latest["merge_seconds"] >= 0 and latest["error_message"] is None
    (failed,) = json.loads(_status(project, "--history", "dbo.dupes", "--json"))["runs"]
    assert failed["status"] == "failed" and "more than once" in failed["error_message"]
    assert failed["rows_inserted"] is None  # no merge took it
    assert len(json.loads(_status(project, "--history", "--limit", "1", "--json"))["runs"]) == 1

    text = _status(project, "--history", "dbo.Items")
    assert text.splitlines()[0].split()[:4] == ["table", "run_id", "kind", "status"]
    assert len(text.splitlines()) == 3

    unknown = project.cli("status", "--history", "dbo.Nope")
    assert unknown.returncode == 2 and "no run of table 'dbo.Nope'" in unknown.stderr
    refused = _run_results(project)
    assert (refused["command"], refused["exit_code"], refused["report"]) == ("status", 2, None)
    assert "no run of table 'dbo.Nope'" in refused["error"]
    bad = project.cli("status", "--history", "--limit", "0")
    assert bad.returncode == 2 and "not '0'" in bad.stderr


def _run_results(project: Project) -> dict[str, Any]:
    results: dict[str, Any] = json.loads((project.root / "target" / "tidemark_run_results.json").read_text())
    return results


def _status(project: Project, *args: str) -> str:
    done = project.cli("status", *args)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout
