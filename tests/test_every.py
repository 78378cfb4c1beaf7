"""`python -m extract --every DURATION`: one process syncing again and again, woken by SIGUSR1, stopped by SIGTERM."""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from tests.conftest import REPO, Project
from tests.demo_fixture import demo, refuse_credit_limit_change
from tests.replica_check import assert_replicas_equal

__all__ = ["demo"]


class Loop:
    """The extract running with --every --json; its stdout lines (one JSON object per sync) read as they come."""

    def __init__(self, project: Project, log: Path, *args: str) -> None:
        env = {**os.environ, **project.env, "DBT_PROFILES_DIR": str(project.root)}
        self.log = log
        self._stderr = log.open("w")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "extract", *args],
            cwd=REPO,
            env=env,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            text=True,
        )
        self._lines: queue.Queue[str] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self._lines.put(line)

    def next_sync(self) -> dict[str, Any]:
        try:
            line = self._lines.get(timeout=300)
        except queue.Empty:
            raise AssertionError(f"no sync reported in 300 s; stderr:\n{self.log.read_text()[-4000:]}") from None
        report: dict[str, Any] = json.loads(line)
        return report

    def signal(self, signum: int) -> None:
        self.process.send_signal(signum)

    def stop(self) -> int:
        self.signal(signal.SIGTERM)
        code = self.process.wait(timeout=120)
        self._stderr.close()
        return code


def _landed(report: dict[str, Any], table: str) -> int:
    [entry] = [entry for entry in report["tables"] if entry["table"] == table]
    assert entry["status"] == "landed", entry
    return int(entry["rows_landed"])


def test_every_syncs_on_signal_outlives_a_failed_merge_and_stops_on_sigterm(demo: Project, tmp_path: Path) -> None:
    loop = Loop(demo, tmp_path / "stderr.log", "--all", "--json", "--every", "1h", "--dbt", "build")
    try:
        first = loop.next_sync()
        assert (first["sync"], first["exit_code"], first["failed"]) == (1, 0, 0), first
        assert first["dbt"]["success"] is True
        assert _landed(first, "dbo.Customers") == 60
        assert_replicas_equal(demo)

        # The second sync's merge is refused by the replica; the loop reports it and goes on.
        replica = refuse_credit_limit_change(demo, 5)
        asked = datetime.now(UTC)
        loop.signal(signal.SIGUSR1)
        second = loop.next_sync()
        assert (second["sync"], second["exit_code"], second["dbt"]["success"]) == (2, 5, False), second
        assert datetime.fromisoformat(second["started_at"]) >= asked
        assert demo.scalar(f"select creditlimit from {replica} where customerid = 5") != 5000000

        with demo.target() as conn:
            conn.execute(f"alter table {replica} drop constraint limit_guard")
        # A model added while the loop sleeps is read before the next run, and built with the replica it reads.
        customers = demo.model_name("dbo.Customers")
        (demo.root / "models" / "every_probe.sql").write_text(
            f"select count(*) as probe from {{{{ ref('{customers}') }}}}\n"
        )
        loop.signal(signal.SIGUSR1)
        third = loop.next_sync()
        assert (third["sync"], third["exit_code"], third["dbt"]["success"]) == (3, 0, True), third
        assert _landed(third, "dbo.Customers") >= 1
        assert demo.scalar(f"select creditlimit from {replica} where customerid = 5") == 5000000
        assert_replicas_equal(demo)
        assert demo.scalar("select count(*) from information_schema.tables where table_name = 'every_probe'") == 1
    finally:
        code = loop.stop()
    log = loop.log.read_text()
    assert code == 0, log[-4000:]
    assert "syncing every 1h; `kill -USR1" in log
    assert "sync 3 took" in log and "next at" in log and "stopping as asked" in log
    # Each sync ran every table with something to read; the others were checked, and ran no run.
    tables = [entry for sync in (first, second, third) for entry in sync["tables"]]
    assert len(tables) == 15 and {entry["status"] for entry in tables} <= {"landed", "unchanged"}, tables
    landed = sum(1 for entry in tables if entry["status"] == "landed")
    assert demo.scalar("select count(*) from _migration.run_log where status = 'landed'") == landed


def _extract(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "extract", *args], cwd=REPO, capture_output=True, text=True, timeout=120
    )


def test_every_refuses_a_bad_duration_and_a_snapshot() -> None:
    bad = _extract("--all", "--every", "soon")
    assert bad.returncode == 2
    assert "--every must be a duration such as 0s, 90s, 5m or 1h, not 'soon'" in bad.stderr
    snapshot = _extract("--table", "dbo.Users", "--snapshot-date", "2024-01-31", "--every", "1h")
    assert snapshot.returncode == 2
    assert "--every repeats the sync of changed rows; a --snapshot-date is landed once" in snapshot.stderr
