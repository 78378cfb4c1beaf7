"""Every command leaves what it did in the project's `target/tidemark_run_results.json` (as dbt leaves
`target/run_results.json`): the command, its arguments (secrets masked), when it started and ended, its
exit code and error, and the summary a sync or reconcile prints with `--json`. A scheduler reads it
after the process ends; each command replaces the file of the one before."""

from __future__ import annotations

import json
import sys
from datetime import UTC, datetime
from pathlib import Path

from extract.config.environment import project_dir
from extract.core.secrets import mask

FILE_NAME = "tidemark_run_results.json"

_report: dict[str, object] | None = None


def record_report(report: dict[str, object]) -> None:
    """The summary of this process's command (the last one, for `--every`)."""
    global _report
    _report = report


def write(argv: list[str], started_at: datetime, exit_code: int, error: str | None) -> Path | None:
    """The file, in the project the command worked in; none outside a dbt project."""
    project = project_dir()
    if not (project / "dbt_project.yml").is_file():
        return None
    ended_at = datetime.now(UTC)
    results = {
        "command": argv[0] if argv and not argv[0].startswith("-") else "sync",
        "args": [mask(arg) for arg in argv],
        "started_at": started_at.isoformat(),
        "ended_at": ended_at.isoformat(),
        "elapsed_seconds": round((ended_at - started_at).total_seconds(), 3),
        "exit_code": exit_code,
        "error": None if error is None else mask(error),
        "report": _report,
    }
    path = project / "target" / FILE_NAME
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(results, indent=2, default=str))
    except OSError as exc:  # a read-only project still gets its command run
        print(f"note: {path} not written ({exc})", file=sys.stderr)
        return None
    return path
