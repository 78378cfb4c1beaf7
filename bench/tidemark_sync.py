"""tidemark's own syncs of bench.Items in a scratch project: the extract, and the dbt merge in its process."""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psutil
import psycopg

from bench.measure import STEP_BOUND_SECONDS, Measured, StepStopped, kill_group, run
from extract.project.package import PACKAGE_FOLDER, install_package

REPO = Path(__file__).resolve().parent.parent
PYTHON = sys.executable
DBT = str(Path(sys.executable).with_name("dbt"))
SYNC_TABLES = "source_schema,source_table,cursor_column,primary_key,enabled\nbench,Items,,,true\n"
#: The merge without tests and snapshots: the replica model and the state view.
MERGE = "run --select replica state"
#: The README's command: every table, then `dbt build` of what landed.
BUILD = "build"
ITEMS_SYNC = ("--table", "bench.Items", "--dbt", MERGE)

_LAST_RUN = """
select r.rows_landed, extract(epoch from r.ended_at - r.started_at)
from _migration.run_log as r
where r.status = 'landed'
order by r.event_id desc
limit 1
"""

_LAST_MERGE = """
select rows_in_batch, rows_inserted, rows_updated, rows_unchanged,
    extract(epoch from merged_at - merge_started_at)
from _migration.merge_log
order by merge_id desc
limit 1
"""


@dataclass(frozen=True)
class Sync:
    #: `python -m extract --table bench.Items --dbt '<MERGE>'`: extract, then dbt in the same process.
    command: Measured
    rows_landed: int
    #: From the run log: clock read, partition planning and landing, without process start-up.
    landing_seconds: float
    rows_in_batch: int
    rows_inserted: int
    rows_updated: int
    rows_unchanged: int
    #: From the merge log: the merge statement inside `dbt run`.
    merge_seconds: float

    @property
    def seconds(self) -> float:
        return self.command.seconds


class TidemarkProject:
    """A scratch copy of the dbt project with one table configured, as a user would set it up."""

    def __init__(
        self,
        root: Path,
        env: dict[str, str],
        target_url: str,
        sync_tables: str = SYNC_TABLES,
        file_sources: str | None = None,
    ) -> None:
        self.root = root
        self.target_url = target_url
        self.env = {
            **env,
            "TIDEMARK_PROJECT_DIR": str(root),
            "DBT_PROFILES_DIR": str(root),
            "DBT_SEND_ANONYMOUS_USAGE_STATS": "false",
        }
        shutil.rmtree(root, ignore_errors=True)
        root.mkdir(parents=True)
        shutil.copy(REPO / "dbt_project.yml", root / "dbt_project.yml")
        shutil.copytree(REPO / "seeds", root / "seeds")
        install_package(root, REPO / PACKAGE_FOLDER)
        (root / "snapshots").mkdir()
        shutil.copy(REPO / "profiles.yml.example", root / "profiles.yml")
        (root / "seeds" / "sync_tables.csv").write_text(sync_tables)
        # The demo's file source, unless the bench's own is given.
        (root / "seeds" / "file_sources.csv").unlink()
        if file_sources is not None:
            (root / "seeds" / "file_sources.csv").write_text(file_sources)
        run([PYTHON, "-m", "extract", "generate"], self.env, REPO, "extract generate")
        run([DBT, "seed", "--project-dir", str(root)], self.env, root, "dbt seed")

    def extract(self) -> Measured:
        return run([PYTHON, "-m", "extract", "--table", "bench.Items"], self.env, REPO, "extract")

    def build(self) -> Measured:
        return run([DBT, "build", "--project-dir", str(self.root)], self.env, self.root, "dbt build")

    def replica(self) -> tuple[str, str]:
        """(schema, table) of the replica, as the run log names it."""
        with psycopg.connect(self.target_url) as conn:
            row = conn.execute("select target_schema, target_table from _migration.run_log limit 1").fetchone()
        assert row is not None, "no run logged yet"
        return str(row[0]), str(row[1])

    def sync(self, dbt: str = MERGE) -> Sync:
        """One command, as a scheduler would run it: the extract, then dbt (`--dbt`): the merge alone, or
        `BUILD` as the README gives it."""
        return self.logged(self.command("--table", "bench.Items", "--dbt", dbt))

    def sync_all(self, dbt: str) -> Sync:
        """The README's command: `--all`, then dbt."""
        return self.logged(self.command("--all", "--dbt", dbt))

    def command(self, *arguments: str) -> Measured:
        """`python -m extract ARGUMENTS` in this project, measured."""
        return run([PYTHON, "-m", "extract", *arguments], self.env, REPO, f"extract {' '.join(arguments)}")

    def logged(self, synced: Measured) -> Sync:
        """`synced` with what its run and merge logged."""
        with psycopg.connect(self.target_url) as conn:
            landed = conn.execute(_LAST_RUN).fetchone()
            logged = conn.execute(_LAST_MERGE).fetchone()
        assert landed is not None and logged is not None, "the sync left no run or merge in the logs"
        return Sync(
            command=synced,
            rows_landed=int(landed[0]),
            landing_seconds=float(landed[1]),
            rows_in_batch=int(logged[0]),
            rows_inserted=int(logged[1]),
            rows_updated=int(logged[2]),
            rows_unchanged=int(logged[3]),
            merge_seconds=float(logged[4]),
        )


def _peak_rss(pid: int) -> int:
    """The most memory the process has held since it started (VmHWM), in bytes."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    return 0


class SyncLoop:
    """`--every` in one long-lived process: each sync is asked for with SIGUSR1 and timed from the signal
    to the line the process prints when the sync (landing and merge) is done. The first sync runs at start,
    timed from the process' start: `first_seconds` and `first_report`."""

    def __init__(self, project: TidemarkProject, arguments: tuple[str, ...] = ITEMS_SYNC) -> None:
        self.project = project
        command = [PYTHON, "-m", "extract", *arguments, "--every", "24h", "--json"]
        self.log = project.root / "every.log"
        started = time.perf_counter()
        with self.log.open("w") as log:
            self.process = subprocess.Popen(
                command,
                env=project.env,
                cwd=REPO,
                stdout=subprocess.PIPE,
                stderr=log,
                text=True,
                start_new_session=True,  # its own process group: stopped, its JVM goes with it
            )
        try:
            self.first_report = self._report()  # the JVM, dbt and the project loaded
        except BaseException:
            kill_group(self.process)
            raise
        self.first_seconds = time.perf_counter() - started

    def _report(self) -> dict[str, Any]:
        """The next sync's report; a sync past the bound is stopped with the process (StepStopped)."""
        assert self.process.stdout is not None
        stopped = threading.Event()

        def stop() -> None:
            stopped.set()
            kill_group(self.process)

        watchdog = threading.Timer(STEP_BOUND_SECONDS, stop)
        watchdog.start()
        try:
            line = self.process.stdout.readline()
        finally:
            watchdog.cancel()
        if stopped.is_set():
            raise StepStopped("extract --every: a sync", STEP_BOUND_SECONDS, self.log.read_text())
        if not line:
            code = self.process.wait()
            raise RuntimeError(f"extract --every exited (code {code}) without reporting a sync; see {self.log}")
        report: dict[str, Any] = json.loads(line)
        if report["exit_code"] != 0:
            raise RuntimeError(f"extract --every: sync {report['sync']} failed ({line[-2000:]}); see {self.log}")
        return report

    def measured(self) -> Measured:
        """One sync, asked for now; its output is the sync's JSON report."""
        started = time.perf_counter()
        self.process.send_signal(signal.SIGUSR1)
        report = self._report()
        seconds = time.perf_counter() - started
        process = psutil.Process(self.process.pid)
        children = sum(_peak_rss(child.pid) for child in process.children(recursive=True))
        return Measured(seconds, _peak_rss(process.pid), children, json.dumps(report))

    def sync(self) -> Sync:
        return self.project.logged(self.measured())

    def stop(self) -> None:
        if self.process.poll() is not None:  # stopped past the bound, or exited: said then
            return
        self.process.send_signal(signal.SIGTERM)
        code = self.process.wait(timeout=120)
        if code != 0:
            raise RuntimeError(f"extract --every exited {code} when stopped")
