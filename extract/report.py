"""What a pass hands back: the summary `--json` prints, and the exit code."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass(frozen=True)
class TableReport:
    """One table of a pass: what its run gave back (a RunResult, SnapshotResult or ReconcileResult), or why
    it failed."""

    table: str
    status: str
    result: Any = None
    error: str | None = None

    def as_json(self) -> dict[str, object]:
        if self.result is None:
            return {"table": self.table, "status": self.status, "error": self.error}
        return {"status": self.status, **asdict(self.result)}


@dataclass(frozen=True)
class DbtReport:
    args: list[str]
    success: bool | None
    error: str | None
    #: How many times a reconcile ran dbt (before, to merge what waited; after, to apply its repairs).
    runs: int | None = None

    def as_json(self) -> dict[str, object]:
        shown: dict[str, object] = {"args": self.args}
        if self.runs is not None:
            shown["runs"] = self.runs
        return {**shown, "success": self.success, "error": self.error}


@dataclass(frozen=True)
class PassReport:
    tables: list[TableReport] = field(default_factory=list)
    #: The catalog read the pass began with (a sync's only).
    catalog: dict[str, object] | None = None
    dbt: DbtReport | None = None
    #: The reconcile after the merge (--reconcile, --reconcile-every).
    reconcile: PassReport | None = None
    #: A pass of `--every` that stopped before any table ran.
    error: str | None = None

    @property
    def failed(self) -> list[str]:
        return [t.table for t in self.tables if t.status == "failed"]

    @property
    def landed(self) -> list[str]:
        return [t.table for t in self.tables if t.status == "landed"]

    @property
    def unchanged(self) -> list[str]:
        """Tables a check found with nothing to read (extract/readers/unchanged.py): they ran no run."""
        return [t.table for t in self.tables if t.status == "unchanged"]

    def as_json(self) -> dict[str, object]:
        if self.error is not None:
            return {"error": self.error}
        shown: dict[str, object] = {"tables": [t.as_json() for t in self.tables], "failed": len(self.failed)}
        if self.catalog is not None:
            shown["catalog"] = self.catalog
        if self.dbt is not None:
            shown["dbt"] = self.dbt.as_json()
        if self.reconcile is not None:
            shown["reconcile"] = self.reconcile.as_json()
        return shown


@dataclass(frozen=True)
class Outcome:
    report: PassReport
    exit_code: int


def print_report(report: dict[str, object], one_line: bool = False) -> None:
    """The summary on stdout: indented for one pass, a line per pass for `--every` (JSON Lines)."""
    print(json.dumps(report) if one_line else json.dumps(report, indent=2), flush=True)
