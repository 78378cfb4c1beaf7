"""An `--every` process serves Prometheus text metrics (`--metrics-port`), read from the state at each
scrape: per table, lag, rows landed and merged, last success and failures; and its own passes."""

from __future__ import annotations

import re
import signal
import urllib.request
from pathlib import Path

from extract.devtools.server import free_port
from tests.conftest import Project
from tests.test_every import Loop

STAMP = "clock_timestamp() at time zone 'UTC'"


def _scrape(port: int) -> dict[str, float]:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=30) as response:
        assert response.headers["Content-Type"].startswith("text/plain; version=0.0.4")
        text = response.read().decode()
    samples = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            name, value = line.rsplit(" ", 1)
            samples[name] = float(value)
    assert re.search(r"^# TYPE tidemark_rows_merged_total counter$", text, re.M), text
    return samples


def test_an_every_process_serves_its_metrics(project: Project, tmp_path: Path) -> None:
    with project.source() as conn:
        conn.execute("create schema dbo")
        for table in ("Items", 'Odd"Name\\'):
            quoted = '"' + table.replace('"', '""') + '"'
            conn.execute(f'create table dbo.{quoted} ("Id" integer primary key, "ModifiedDate" timestamp(3))')
            conn.execute(f"insert into dbo.{quoted} select i, {STAMP} from generate_series(1, 10) as i")
    project.write_sync_tables(["dbo,Items,ModifiedDate,,true", 'dbo,"Odd""Name\\",ModifiedDate,,true'])
    project.generate()
    port = free_port()
    loop = Loop(
        project,
        tmp_path / "stderr.log",
        "--all",
        "--json",
        "--every",
        "1h",
        "--dbt",
        "build",
        "--metrics-port",
        str(port),
    )
    try:
        assert loop.next_sync()["exit_code"] == 0
        first = _scrape(port)
        items = 'table="dbo.Items"'
        odd = 'table="dbo.Odd\\"Name\\\\"'  # the quote and the backslash escaped, as the format says
        assert first[f"tidemark_rows_landed_total{{{items}}}"] == 10
        assert first[f'tidemark_rows_merged_total{{{odd},change="inserted"}}'] == 10
        assert first[f"tidemark_runs_failed_total{{{items}}}"] == 0
        assert first[f"tidemark_last_run_failed{{{items}}}"] == 0
        assert 0 <= first[f"tidemark_lag_seconds{{{items}}}"] < 600
        assert first[f"tidemark_last_success_timestamp_seconds{{{items}}}"] > 1.7e9
        assert (first["tidemark_syncs_total"], first["tidemark_sync_failures_total"]) == (1, 0)

        with project.source() as conn:
            conn.execute(f'update dbo."Items" set "ModifiedDate" = {STAMP} where "Id" <= 3')
        loop.signal(signal.SIGUSR1)
        assert loop.next_sync()["exit_code"] == 0
        second = _scrape(port)
        assert second[f"tidemark_rows_landed_total{{{items}}}"] == 13
        assert second[f'tidemark_rows_merged_total{{{items},change="updated"}}'] == 3
        assert second["tidemark_syncs_total"] == 2
    finally:
        assert loop.stop() == 0


def test_metrics_port_needs_every_and_a_port_number(project: Project) -> None:
    refused = project.cli("--all", "--metrics-port", "9187")
    assert refused.returncode == 2 and "give --every too" in refused.stderr
    bad = project.cli("--all", "--every", "1h", "--metrics-port", "99999")
    assert bad.returncode == 2 and "not '99999'" in bad.stderr
