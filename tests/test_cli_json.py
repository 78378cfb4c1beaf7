"""`python -m extract --all --json`: a summary an orchestrator can read, and exit codes that tell."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from tests.conftest import REPO, Project
from tests.demo_fixture import demo

__all__ = ["demo"]


def test_json_summary_and_exit_code_when_one_table_fails(demo: Project) -> None:
    seed = demo.root / "seeds" / "sync_tables.csv"
    seed.write_text(seed.read_text() + "dbo,Vanished,,,true\n")
    env = {**os.environ, **demo.env}
    result = subprocess.run(
        [sys.executable, "-m", "extract", "--all", "--json"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 1
    summary = json.loads(result.stdout)
    by_table = {entry["table"]: entry for entry in summary["tables"]}
    assert summary["failed"] == 1, result.stdout + result.stderr[-3000:]
    assert by_table["dbo.Vanished"]["status"] == "failed"
    assert "unknown table 'dbo.Vanished'" in by_table["dbo.Vanished"]["error"]
    landed = {t: e for t, e in by_table.items() if e["status"] == "landed"}
    assert set(landed) == {"dbo.Countries", "dbo.Customers", "dbo.Products", "dbo.Orders", "dbo.OrderLines"}
    assert landed["dbo.Customers"]["rows_landed"] == 60
    assert landed["dbo.Customers"]["migration_type"] == "full"
    assert landed["dbo.Customers"]["watermark_candidate"]
    assert "1 of 6 table(s) failed: dbo.Vanished" in result.stderr
