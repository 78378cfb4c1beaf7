"""A batch of one partition's size lands in the source's JVM, with Spark's JDBC code and no Spark: a pass of
small batches starts no Spark driver (about 1 s of a pass of 10 small tables); a larger batch still does."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from extract.devtools.demo.changes import apply_changes
from tests.conftest import REPO, Project
from tests.demo_fixture import demo
from tests.replica_check import assert_replicas_equal

__all__ = ["demo"]

#: The command in a fresh interpreter, each start of Spark's driver counted on the way.
_COUNTING_STARTS = """
import json
from extract.runtime import spark

starts = []
start = spark.SparkRuntime.start
spark.SparkRuntime.start = lambda runtime: (starts.append(1), start(runtime))[1]
from extract.cli import main

code = main(["--all", "--quiet"])
print(json.dumps({"code": code, "driver_starts": len(starts)}))
"""


def _sync_counting_driver_starts(project: Project) -> int:
    env = {**os.environ, **project.env, "DBT_PROFILES_DIR": str(project.root)}
    run = subprocess.run(
        [sys.executable, "-c", _COUNTING_STARTS], env=env, cwd=REPO, capture_output=True, text=True, timeout=300
    )
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-4000:]
    outcome = json.loads(run.stdout.strip().splitlines()[-1])
    assert outcome["code"] == 0, run.stderr[-4000:]
    return int(outcome["driver_starts"])


def _landed_by(project: Project) -> list[str]:
    """How the runs that landed were read, each way once."""
    rows = project.scalar("select array_agg(distinct landed_by) from _migration.run_log where status = 'landed'")
    return sorted(rows or [])


def test_small_batches_land_without_starting_spark_and_larger_ones_with_it(demo: Project) -> None:
    assert _sync_counting_driver_starts(demo) == 0
    assert _landed_by(demo) == ["driver"]
    demo.build()
    assert_replicas_equal(demo)

    with demo.source() as conn:
        apply_changes(conn, 1)
    demo.env["PARTITION_ROWS"] = "5"  # partitions of a fixed size: read by Spark
    assert _sync_counting_driver_starts(demo) >= 1
    assert _landed_by(demo) == ["driver", "spark"]
    demo.build()
    assert_replicas_equal(demo)
