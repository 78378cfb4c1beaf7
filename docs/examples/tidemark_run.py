"""Run a tidemark command from a scheduler and read its JSON: what the Airflow DAG and the Dagster
assets beside this file share. Copy it next to your DAGs or assets.

The contract they rely on is `report.schema.json`: `tidemark --all --json` prints one JSON object on
stdout (progress and errors go to stderr), and its exit code says how it went (0 every table landed,
or had nothing to read, and dbt succeeded, 1 some table failed, 2 bad input, 3 the source unreachable, 5 dbt failed)."""

from __future__ import annotations

import json
import os
import subprocess
from typing import Any

#: Exit codes after which the JSON report is on stdout (2 and 3 stop before any table runs).
REPORTED = (0, 1, 5)


class TidemarkFailed(RuntimeError):
    """The command failed; the message holds its exit code and the end of its stderr."""


def run_tidemark(
    args: list[str], env: dict[str, str] | None = None, command: list[str] | None = None
) -> dict[str, Any]:
    """`tidemark ARGS --json`, its report parsed; raises TidemarkFailed unless every table landed (or had
    nothing to read) and dbt succeeded."""
    done = subprocess.run(
        [*(command or ["tidemark"]), *args, "--json"],
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode not in REPORTED:
        raise TidemarkFailed(f"tidemark exited {done.returncode}: {done.stderr.strip()[-2000:]}")
    report: dict[str, Any] = json.loads(done.stdout)
    report["exit_code"] = done.returncode
    if done.returncode != 0:
        raise TidemarkFailed(f"tidemark exited {done.returncode}: {summary(report)}")
    return report


def summary(report: dict[str, Any]) -> dict[str, Any]:
    """What a scheduler shows of a sync: rows landed per table, the tables with nothing to read, the tables
    that failed and why, dbt's outcome."""
    tables = report["tables"]
    return {
        "rows_landed": {t["table"]: t["rows_landed"] for t in tables if t["status"] == "landed"},
        "unchanged": [t["table"] for t in tables if t["status"] == "unchanged"],
        "failed": {t["table"]: t["error"] for t in tables if t["status"] == "failed"},
        "schema_changes": {t["table"]: t["schema_changes"] for t in tables if t.get("schema_changes")},
        "dbt_success": (report.get("dbt") or {}).get("success"),
    }
