"""The peers on the wide section's workload: every table of a schema, incremental on ModifiedDate, merged on id."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from bench.measure import Measured, run
from bench.peers.runner import BENCH_VENV, SLING
from bench.tidemark_sync import REPO

#: Sling runs a replication's streams one after another unless told; tidemark lands two tables at once by
#: default, so Sling gets two as well.
SLING_THREADS = "2"


class DltWide:
    name = "dlt"
    schema = "dlt_wide"

    def __init__(self, work: Path, source_url: str, target_url: str, source_schema: str) -> None:
        self.pipelines = work / "dlt-wide-pipelines"
        shutil.rmtree(self.pipelines, ignore_errors=True)
        self.source_url = source_url.replace("postgresql://", "postgresql+psycopg2://", 1)
        self.target_url = target_url
        self.source_schema = source_schema
        self.env = {
            **os.environ,
            "RUNTIME__LOG_LEVEL": "WARNING",
            "RUNTIME__DLTHUB_TELEMETRY": "false",
            # dlt insists on a password; the benchmark's server trusts local connections and ignores it.
            "DESTINATION__POSTGRES__CREDENTIALS__PASSWORD": "unused",
            # dlt's default round-robin opens every table's query at once, one connection each: a
            # schema of many tables exhausts any pool. One table after another, as dlt's docs advise.
            "EXTRACT__NEXT_ITEM_MODE": "fifo",
        }

    def sync(self) -> Measured:
        script = REPO / "bench" / "peers" / "dlt_wide.py"
        command = [str(BENCH_VENV / "bin" / "python"), str(script), "--source", self.source_url]
        command += ["--schema", self.source_schema, "--target", self.target_url]
        command += ["--pipelines-dir", str(self.pipelines)]
        return run(command, self.env, REPO, "dlt")

    def table(self, source_table: str) -> tuple[str, str]:
        return self.schema, source_table


class SlingWide:
    name = "Sling"
    schema = "sling_wide"

    def __init__(self, work: Path, source_url: str, target_url: str, source_schema: str) -> None:
        home = work / "sling-wide-home"
        shutil.rmtree(home, ignore_errors=True)
        home.mkdir(parents=True)
        self.replication = home / "replication.json"
        # A replication over `schema.*`, as Sling's docs configure a whole schema (JSON is YAML).
        replication = {
            "source": "WIDE_SOURCE",
            "target": "WIDE_TARGET",
            "defaults": {
                "mode": "incremental",
                "primary_key": ["id"],
                "update_key": "ModifiedDate",
                "object": self.schema + ".{stream_table}",
            },
            "streams": {f"{source_schema}.*": None},
        }
        self.replication.write_text(json.dumps(replication, indent=2))
        self.env = {
            **os.environ,
            "SLING_HOME_DIR": str(home),
            "SLING_DISABLE_TELEMETRY": "true",
            "SLING_THREADS": SLING_THREADS,
            "WIDE_SOURCE": source_url + "?sslmode=disable",
            "WIDE_TARGET": target_url + "?sslmode=disable",
        }

    def sync(self) -> Measured:
        return run([str(SLING), "run", "-r", str(self.replication)], self.env, REPO, "Sling")

    def table(self, source_table: str) -> tuple[str, str]:
        return self.schema, source_table
