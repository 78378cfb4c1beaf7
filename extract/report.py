"""What a pass hands back: the summary `--json` prints, and the exit code."""

from __future__ import annotations

import json
from dataclasses import dataclass


@dataclass(frozen=True)
class Outcome:
    #: The summary `--json` prints: each table's result, how many failed, dbt's outcome.
    report: dict[str, object]
    exit_code: int


def print_report(report: dict[str, object], one_line: bool = False) -> None:
    """The summary on stdout: indented for one pass, a line per pass for `--every` (JSON Lines)."""
    print(json.dumps(report) if one_line else json.dumps(report, indent=2), flush=True)
