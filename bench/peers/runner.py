"""Run the peers on the same workload as tidemark: a full first sync, then an incremental one."""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from bench.measure import Measured, count_rows, run
from bench.tidemark_sync import REPO

BENCH_VENV = REPO / ".venv-bench"
SLING = BENCH_VENV / "lib" / "python3.11" / "site-packages" / "sling_linux_amd64" / "bin" / "sling-linux-amd64"


@dataclass(frozen=True)
class PeerSync:
    measured: Measured
    #: Rows in the peer's target table afterwards, checked against the source.
    rows_in_target: int


def available() -> str | None:
    """None when the peers are installed (`make bench-peers`), else what is missing."""
    if not (BENCH_VENV / "bin" / "python").exists():
        return f"{BENCH_VENV} does not exist"
    if not SLING.exists():
        return f"the Sling CLI is missing at {SLING}"
    return None


class Dlt:
    name = "dlt"
    table = "dlt_bench.items"

    def __init__(self, work: Path, source_url: str, target_url: str) -> None:
        self.pipelines = work / "dlt-pipelines"
        shutil.rmtree(self.pipelines, ignore_errors=True)
        self.source_url = source_url.replace("postgresql://", "postgresql+psycopg2://", 1)
        self.target_url = target_url
        self.env: Mapping[str, str] = {
            **os.environ,
            "RUNTIME__LOG_LEVEL": "WARNING",
            "RUNTIME__DLTHUB_TELEMETRY": "false",
            # dlt insists on a password; the benchmark's server trusts local connections and ignores it.
            "DESTINATION__POSTGRES__CREDENTIALS__PASSWORD": "unused",
        }

    def sync(self) -> PeerSync:
        command = [
            str(BENCH_VENV / "bin" / "python"),
            str(REPO / "bench" / "peers" / "dlt_sync.py"),
            "--source",
            self.source_url,
            "--target",
            self.target_url,
            "--pipelines-dir",
            str(self.pipelines),
        ]
        measured = run(command, self.env, REPO, "dlt")
        return PeerSync(measured, count_rows(self.target_url, self.table))


class Sling:
    name = "Sling"
    table = "sling_bench.items"

    def __init__(self, work: Path, source_url: str, target_url: str) -> None:
        home = work / "sling-home"
        shutil.rmtree(home, ignore_errors=True)
        home.mkdir(parents=True)
        self.source_url = source_url + "?sslmode=disable"
        self.target_url = target_url
        self.env = {**os.environ, "SLING_HOME_DIR": str(home), "SLING_DISABLE_TELEMETRY": "true"}

    def sync(self) -> PeerSync:
        command = [
            str(SLING),
            "run",
            "--src-conn",
            self.source_url,
            "--src-stream",
            'bench."Items"',
            "--tgt-conn",
            self.target_url + "?sslmode=disable",
            "--tgt-object",
            self.table,
            "--mode",
            "incremental",
            "--primary-key",
            "Id",
            "--update-key",
            "ModifiedDate",
        ]
        measured = run(command, self.env, REPO, "Sling")
        return PeerSync(measured, count_rows(self.target_url, self.table))
