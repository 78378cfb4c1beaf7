"""An `--every` process serves Prometheus metrics (`--metrics-port`), read from the state at each
scrape: per table, lag, rows landed and merged, last success and failures; and its own passes."""

from __future__ import annotations

import re
import signal
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from extract.config.urls import parse_url
from extract.core.state_schema import StateSchema
from extract.devtools.server import free_port
from extract.metrics import Metrics, MetricsServer
from tests.conftest import Project
from tests.test_every import Loop

STAMP = "clock_timestamp() at time zone 'UTC'"


Sample = tuple[str, frozenset[tuple[str, str]]]


def _scrape(port: int) -> dict[Sample, float]:
    """Each sample of a scrape, by name and labels (as Prometheus reads the text: escapes undone)."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=30) as response:
        assert response.headers["Content-Type"].startswith("text/plain; version=0.0.4")
        text = response.read().decode()
    assert re.search(r"^# TYPE tidemark_rows_merged_total counter$", text, re.M), text
    return {
        (sample.name, frozenset(sample.labels.items())): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def _at(name: str, **labels: str) -> Sample:
    return name, frozenset(labels.items())


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
        items, odd = "dbo.Items", 'dbo.Odd"Name\\'  # the quote and the backslash survive the text format
        assert first[_at("tidemark_rows_landed_total", table=items)] == 10
        assert first[_at("tidemark_rows_merged_total", table=odd, change="inserted")] == 10
        assert first[_at("tidemark_runs_failed_total", table=items)] == 0
        assert first[_at("tidemark_last_run_failed", table=items)] == 0
        assert 0 <= first[_at("tidemark_lag_seconds", table=items)] < 600
        assert first[_at("tidemark_last_success_timestamp_seconds", table=items)] > 1.7e9
        assert (first[_at("tidemark_syncs_total")], first[_at("tidemark_sync_failures_total")]) == (1, 0)

        with project.source() as conn:
            conn.execute(f'update dbo."Items" set "ModifiedDate" = {STAMP} where "Id" <= 3')
        loop.signal(signal.SIGUSR1)
        assert loop.next_sync()["exit_code"] == 0
        second = _scrape(port)
        assert second[_at("tidemark_rows_landed_total", table=items)] == 13
        assert second[_at("tidemark_rows_merged_total", table=items, change="updated")] == 3
        assert second[_at("tidemark_syncs_total")] == 2
    finally:
        assert loop.stop() == 0


def test_metrics_port_needs_every_and_a_port_number(project: Project) -> None:
    refused = project.cli("--all", "--metrics-port", "9187")
    assert refused.returncode == 2 and "give --every too" in refused.stderr
    bad = project.cli("--all", "--every", "1h", "--metrics-port", "99999")
    assert bad.returncode == 2 and "not '99999'" in bad.stderr


def test_a_scrape_while_the_target_is_down_answers_503_and_the_server_keeps_serving() -> None:
    metrics = Metrics(parse_url(f"postgresql://127.0.0.1:{free_port()}/nowhere"), StateSchema(), free_port())
    server = MetricsServer(metrics, "127.0.0.1")
    server.start()
    try:
        for path, status in (("/metrics", 503), ("/", 404), ("/metrics", 503)):
            with pytest.raises(urllib.error.HTTPError) as refused:
                urllib.request.urlopen(f"http://127.0.0.1:{server.port}{path}", timeout=30)
            assert refused.value.code == status
            if status == 503:
                assert refused.value.read().startswith(b"# target unreachable: OperationalError")
    finally:
        server.stop()
