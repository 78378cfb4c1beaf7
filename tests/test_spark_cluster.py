"""The extract on a real Spark standalone cluster (a master and a worker started from pyspark's own
distribution on 127.0.0.1): the spark-submit recipe of docs/large-tables.md as written, and
`--master spark://...` without spark-submit. Partitions land as tasks of executors on the worker."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import REPO, Project

pytestmark = pytest.mark.slow

RECIPE_DOC = REPO / "docs" / "large-tables.md"
SPARK_BIN = Path(sys.executable).parent  # pyspark installs spark-class and spark-submit beside python


@dataclass(frozen=True)
class Cluster:
    master: str
    ui: str
    work_dir: Path

    def executors_run(self) -> int:
        """Executors the worker has started, over all applications."""
        return sum(1 for app in self.work_dir.glob("app-*") for e in app.iterdir() if e.is_dir())

    def finished_apps(self) -> list[dict[str, object]]:
        with urllib.request.urlopen(f"{self.ui}/json/", timeout=10) as response:
            state: dict[str, list[dict[str, object]]] = json.load(response)
        return state["completedapps"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _start(log: Path, *args: str) -> subprocess.Popen[bytes]:
    env = {**os.environ, "SPARK_LOCAL_IP": "127.0.0.1", "SPARK_NO_DAEMONIZE": "1"}
    with log.open("wb") as out:
        return subprocess.Popen(
            [str(SPARK_BIN / "spark-class"), *args],
            stdout=out,
            stderr=subprocess.STDOUT,
            env=env,
            start_new_session=True,
        )


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    root = tmp_path_factory.mktemp("spark-cluster")
    port, ui_port = _free_port(), _free_port()
    master = f"spark://127.0.0.1:{port}"
    processes = [
        _start(
            root / "master.log",
            "org.apache.spark.deploy.master.Master",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--webui-port",
            str(ui_port),
        ),
    ]
    ui = f"http://127.0.0.1:{ui_port}"
    try:
        processes.append(
            _start(
                root / "worker.log",
                "org.apache.spark.deploy.worker.Worker",
                master,
                "--host",
                "127.0.0.1",
                "--cores",
                "2",
                "--memory",
                "2g",
                "--webui-port",
                str(_free_port()),
                "--work-dir",
                str(root / "work"),
            )
        )
        deadline = time.monotonic() + 120
        while True:
            try:
                with urllib.request.urlopen(f"{ui}/json/", timeout=5) as response:
                    if json.load(response)["aliveworkers"] == 1:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise AssertionError("the Spark worker did not register:\n" + (root / "worker.log").read_text()[-3000:])
            time.sleep(1)
        yield Cluster(master, ui, root / "work")
    finally:
        for process in processes:
            os.killpg(process.pid, signal.SIGTERM)
            process.wait(timeout=60)


def _recipe() -> str:
    """The spark-submit block of the docs, for this cluster: only the master URL differs, and the line that
    names a SQL Server driver jar, which this machine does not have, is left out."""
    blocks = re.findall(r"```sh\n(.*?)```", RECIPE_DOC.read_text(), flags=re.S)
    recipe = next(b for b in blocks if "spark-submit" in b)
    return "\n".join(line for line in recipe.splitlines() if "TIDEMARK_JARS=" not in line)


def _items(project: Project, rows: int) -> None:
    with project.source() as conn:
        conn.execute("create schema dbo")
        conn.execute('create table dbo."Items" ("ItemID" bigint primary key, "Label" text, "ModifiedDate" timestamp)')
        conn.execute(
            """insert into dbo."Items" select i, 'item ' || i, timestamp '2026-01-01' + i * interval '1 second'
               from generate_series(1, %s) as i""",
            (rows,),
        )
    project.write_sync_tables(["dbo,Items,,,true"])
    project.generate()


def _landed_by_spark(project: Project) -> tuple[str, int]:
    row = project.scalar(
        "select landed_by || ':' || partitions_landed from _migration.run_log where status = 'landed' "
        "order by run_id desc limit 1"
    )
    landed_by, partitions = row.split(":")
    return landed_by, int(partitions)


def test_the_spark_submit_recipe_runs_partitions_on_the_worker(
    cluster: Cluster, project: Project, tmp_path: Path
) -> None:
    _items(project, 30_000)
    # The recipe runs in a checkout: here a copy of the package, so that its zip is written outside the repo.
    checkout = tmp_path / "checkout"
    shutil.copytree(REPO / "extract", checkout / "extract", ignore=shutil.ignore_patterns("__pycache__"))
    script = _recipe().replace("spark://spark-master:7077", cluster.master)
    env = {
        **os.environ,
        **project.env,
        "PATH": f"{SPARK_BIN}:{os.environ['PATH']}",
        "PARTITION_ROWS": "7000",
        "SPARK_LOCAL_IP": "127.0.0.1",
    }
    before = cluster.executors_run()
    done = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", script], cwd=checkout, env=env, capture_output=True, text=True, timeout=900
    )
    assert done.returncode == 0, f"{script}\n{done.stdout[-2000:]}\n{done.stderr[-4000:]}"
    assert cluster.executors_run() > before, "no executor ran on the worker"
    assert _landed_by_spark(project) == ("spark", 5)
    project.merge()
    schema = project.scalar("select table_schema from information_schema.tables where table_name = 'items'")
    assert project.scalar(f'select count(*) from "{schema}".items') == 30_000


def test_master_url_runs_an_incremental_sync_on_the_cluster(cluster: Cluster, project: Project) -> None:
    _items(project, 20_000)
    env = {**project.env, "PARTITION_ROWS": "6000"}
    for change in (
        None,
        'update dbo."Items" set "Label" = \'changed\', "ModifiedDate" = now() where "ItemID" <= 13000',
    ):
        if change is not None:
            with project.source() as conn:
                conn.execute(change)
        before = cluster.executors_run()
        done = subprocess.run(
            [sys.executable, "-m", "extract", "--master", cluster.master, "--all", "--dbt", "build"],
            cwd=REPO,
            env={**os.environ, **env, "DBT_PROFILES_DIR": str(project.root)},
            capture_output=True,
            text=True,
            timeout=900,
        )
        assert done.returncode == 0, done.stderr[-4000:]
        assert cluster.executors_run() > before, "no executor ran on the worker"
        assert _landed_by_spark(project) == ("spark", 4 if change is None else 3)
    verified = project.cli("verify", "--all")
    assert verified.returncode == 0, verified.stdout + verified.stderr
    assert project.scalar("select count(*) from _migration.run_log where status = 'landed'") == 2
