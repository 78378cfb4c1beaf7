"""Shared fixtures: one embedded PostgreSQL and one Spark session per test session.

Each test gets its own source and target databases and its own copy of the dbt
project, so tests cannot see each other's state.
"""

from __future__ import annotations

import itertools
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import psycopg
import pytest
from psycopg import sql
from pyspark.sql import SparkSession

from extract.config.file_sources import read_file_sources
from extract.config.settings import Settings, load_settings
from extract.core.observer import Observer, silent
from extract.devtools import server
from extract.devtools.ddl_times import install_ddl_times
from extract.lifecycle.context import RunContext
from extract.planning.file_plan import generation_plans
from extract.planning.planner import Planner
from extract.project.generate import Origin, write_project_files
from extract.project.package import PACKAGE_FOLDER, install_package
from extract.runtime.spark import SparkRuntime, get_spark
from extract.sync_table import RunResult, sync_table
from tests.cli_runner import run_cli
from tests.dbt_flag_source import look_up_flag_sources_lazily
from tests.dbt_runner import run_dbt
from tests.parse_stash import keep_parse, put_back_parse

REPO = Path(__file__).resolve().parent.parent
DATASETS = REPO.parent / "shared" / "datasets"
_counter = itertools.count(1)

# Every JVM of the suite (Spark's drivers here and in the commands it runs, the launchers before them)
# lives seconds on small data: the client compiler alone and a single-threaded collector spend a third
# less CPU there than the defaults, whose optimising compiler pays off only on long runs (make bench).
os.environ.setdefault("JDK_JAVA_OPTIONS", "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC")
look_up_flag_sources_lazily()  # before any dbt runs here or in the commands forked from here


@pytest.fixture(scope="session")
def pg_admin_url() -> Iterator[str]:
    # Outside pytest's temp tree: pytest resets that tree to mode 0700, which would lock
    # out the OS user the server runs as when tidemark runs as root.
    base = Path(tempfile.mkdtemp(prefix="tidemark-test-pg-"))
    os.environ.setdefault("XDG_RUNTIME_DIR", str(base / "runtime"))
    data_dir = base / "data"
    url = server.start(data_dir, server.free_port(), durable=False)
    yield url
    server.stop(data_dir)
    shutil.rmtree(base, ignore_errors=True)


@pytest.fixture(scope="session")
def spark() -> SparkSession:
    return get_spark("local[2]")


def database_url(admin_url: str, database: str) -> str:
    return admin_url.rsplit("/", 1)[0] + "/" + database


class Project:
    """A scratch tidemark project: source and target databases, seeds, generated dbt files."""

    def __init__(
        self,
        root: Path,
        admin_url: str,
        spark: SparkSession,
        tag: str,
        target_db: str | None = None,
        target_admin_url: str | None = None,
    ) -> None:
        self.root = root
        self.spark = spark
        self.source_db = f"src_{tag}"
        self.target_db = target_db or f"tgt_{tag}"
        self.source_url = database_url(admin_url, self.source_db)
        self.target_url = database_url(target_admin_url or admin_url, self.target_db)
        host_port = (target_admin_url or admin_url).split("@", 1)[1].split("/", 1)[0]
        self.port = host_port.split(":")[1]
        self.env = {
            "TIDEMARK_SOURCE_URL": self.source_url,
            "TIDEMARK_TARGET_URL": self.target_url,
            "TIDEMARK_TARGET_HOST": "127.0.0.1",
            "TIDEMARK_TARGET_PORT": self.port,
            "TIDEMARK_TARGET_USER": server.SUPERUSER,
            "TIDEMARK_TARGET_DBNAME": self.target_db,
            "TIDEMARK_PROJECT_DIR": str(root),
            # Exact per-run counts in most tests; the window has tests of its own.
            "TIDEMARK_SAFETY_WINDOW": "0s",
            # dbt's debug log of every statement costs a build more than its queries, and its JSON
            # artifacts (manifest.json twice, run_results.json) a quarter of a small build; the tests
            # that read them ask for them (`keep_dbt_files`).
            "DBT_LOG_LEVEL_FILE": "none",
            "DBT_WRITE_JSON": "false",
        }
        self._planner: Planner | None = None
        #: Whether generate puts back a parse dbt made of the same snapshots file (tests/parse_stash.py).
        self.reuse_parses = True

    def keep_dbt_files(self) -> None:
        """dbt writes its log file (logs/dbt.log) at dbt's own level and its JSON artifacts (target/
        manifest.json, run_results.json), as a user's project has them."""
        del self.env["DBT_LOG_LEVEL_FILE"]
        del self.env["DBT_WRITE_JSON"]

    @property
    def settings(self) -> Settings:
        return load_settings(self.env)

    def source(self) -> psycopg.Connection:
        return psycopg.connect(self.source_url, autocommit=True)

    def target(self) -> psycopg.Connection:
        return psycopg.connect(self.target_url, autocommit=True)

    def write_sync_tables(
        self, rows: list[str], header: str = "source_schema,source_table,cursor_column,primary_key,enabled"
    ) -> None:
        (self.root / "seeds" / "sync_tables.csv").write_text(header + "\n" + "".join(r + "\n" for r in rows))
        self.close()

    @property
    def planner(self) -> Planner:
        if self._planner is None:
            context = RunContext.open(self.settings, SparkRuntime("local[2]"))
            try:
                self._planner = Planner(context)
            except BaseException:
                context.close()
                raise
        return self._planner

    def close(self) -> None:
        if self._planner is not None:
            self._planner.close()
            self._planner.context.close()
            self._planner = None

    def model_name(self, table: str) -> str:
        """The dbt model of a configured table's replica (SCHEMA.TABLE)."""
        return self.planner.model_name(self.planner.find(table))

    def generate(self) -> None:
        plans = [self.planner.plan(c) for c in self.planner.enabled_tables()]
        plans += generation_plans(read_file_sources(self.root / "seeds"), self.settings.state_schema)
        keep_parse(self.root)
        write_project_files(self.root, plans, Origin.of(self.settings.source, self.planner.aliases))
        if self.reuse_parses:
            put_back_parse(self.root)

    def extract(self, table: str | None = None, observer: Observer | None = None) -> list[RunResult]:
        configs = [self.planner.find(table)] if table else self.planner.enabled_tables()
        planner = self.planner
        return [sync_table(planner.context, planner.plan(c), observer or silent) for c in configs]

    def dbt(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        env = {**os.environ, **self.env, "DBT_PROFILES_DIR": str(self.root), "DBT_SEND_ANONYMOUS_USAGE_STATS": "false"}
        result = run_dbt([*args, "--project-dir", str(self.root)], env, self.root)
        if check and result.returncode != 0:
            raise AssertionError(f"dbt {' '.join(args)} failed:\n{result.stdout[-4000:]}\n{result.stderr[-2000:]}")
        return result

    def cli(self, *args: str) -> subprocess.CompletedProcess[str]:
        """`python -m extract ARGS` in a process of its own (see tests/cli_runner.py), in this project's environment."""
        return run_cli(args, {**os.environ, **self.env, "DBT_PROFILES_DIR": str(self.root)}, REPO)

    def assert_reads_recorded(self, table: str, label: str, position_prefix: str) -> None:
        """A run of `table` alone (`python -m extract --table TABLE`) begins by saying it reads the changes
        `label` (Change Tracking, CDC) recorded since its position, no full refresh or safety window."""
        done = self.cli("--table", table)
        assert done.returncode == 0, done.stderr[-3000:]
        began = next(line for line in done.stderr.splitlines() if line.startswith(f"{table}: run "))
        assert f"incremental ({label}); reading the changes recorded since {position_prefix}" in began, began
        assert "full refresh" not in began and "safety window" not in began, began

    def build(self, check: bool = True) -> subprocess.CompletedProcess[str]:
        return self.dbt("build", check=check)

    def sync(self) -> None:
        self.extract()
        self.build()

    def merge(self, check: bool = True) -> subprocess.CompletedProcess[str]:
        """A build of the seeds, the replicas and the state, for a test about the replicas: their histories
        and dbt's tests are left to the builds of the tests about them."""
        return self.dbt("build", "--resource-type", "seed", "--resource-type", "model", check=check)

    def sync_replicas(self) -> None:
        self.extract()
        self.merge()

    def scalar(self, query: str, params: tuple[Any, ...] = ()) -> Any:
        with self.target() as conn:
            row = conn.execute(query, params).fetchone()
        return None if row is None else row[0]


@contextmanager
def new_project(
    root: Path,
    admin_url: str,
    spark: SparkSession,
    target_of: Project | None = None,
    target_admin_url: str | None = None,
    tag: str | None = None,
) -> Iterator[Project]:
    """A project in `root` (a copy of this one's dbt project and seeds) with source and target databases
    of its own, dropped afterwards; with `target_of`, it shares that project's target database; with
    `target_admin_url`, its target database is on that server. `tag` names the databases (default: a
    new name); `root` may hold a project left by another test (see `_project_slot`)."""
    tag = tag or f"{os.getpid()}_{next(_counter)}"
    root.mkdir(parents=True, exist_ok=True)
    # gx/: the starter files only, as init writes them (a demo's checks leave more there).
    for name in ("dbt_project.yml", "seeds", "gx/great_expectations.yml", "gx/.gitignore"):
        src = REPO / name
        dst = root / name
        if src.is_dir():
            shutil.copytree(src, dst, dirs_exist_ok=True)
        else:
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(src, dst)
    # The demo's file source reads the demo's drops folder: a test of file sources writes its own.
    (root / "seeds" / "file_sources.csv").unlink()
    (root / "snapshots").mkdir(exist_ok=True)
    shutil.copy(REPO / "profiles.yml.example", root / "profiles.yml")
    install_package(root, REPO / PACKAGE_FOLDER)
    proj = Project(root, admin_url, spark, tag, None if target_of is None else target_of.target_db, target_admin_url)
    databases = [(admin_url, proj.source_db)]
    if target_of is None:
        databases.append((target_admin_url or admin_url, proj.target_db))
    for server_url, db in databases:
        with psycopg.connect(server_url, autocommit=True) as admin:
            admin.execute(sql.SQL("create database {}").format(sql.Identifier(db)))
    with proj.source() as conn:
        install_ddl_times(conn)  # the stand-in stamps definitions as SQL Server does
    try:
        yield proj
    finally:
        proj.close()
        for server_url, db in databases:
            with psycopg.connect(server_url, autocommit=True) as admin:
                admin.execute(sql.SQL("drop database if exists {} with (force)").format(sql.Identifier(db)))


#: Per worker: the folders of projects and whether a test holds each (see `_project_slot`).
_slots: dict[Path, bool] = {}

#: What a slot keeps of the project before it: dbt's parse of it (extract/project/parse_cache.py).
_KEPT = Path("target/partial_parse.msgpack")


@contextmanager
def _project_slot(base: Path) -> Iterator[tuple[Path, str]]:
    """A project folder and a database tag that the worker's tests take in turn, each emptied of the
    project before it but for dbt's parse of it. Tests of one shape (most use the demo tables) then
    generate the same files under the same names, and dbt parses only what differs, as in a user's
    project between runs; a test's first build does not parse every macro of dbt anew."""
    index = next(i for i in itertools.count() if not _slots.get(base / f"slot{i}", False))
    root = base / f"slot{index}"
    _slots[root] = True
    try:
        if root.exists():
            for path in sorted(root.rglob("*"), reverse=True):
                relative = path.relative_to(root)
                if relative == _KEPT or relative in _KEPT.parents:
                    continue
                if path.is_dir() and not path.is_symlink():
                    path.rmdir()
                else:
                    path.unlink()
        yield root, f"{os.getpid()}_s{index}"
    finally:
        keep_parse(root)
        _slots[root] = False


@pytest.fixture(scope="session")
def project_slots() -> Iterator[Path]:
    base = Path(tempfile.mkdtemp(prefix="tidemark-test-projects-"))
    yield base
    shutil.rmtree(base, ignore_errors=True)


@pytest.fixture
def project(project_slots: Path, pg_admin_url: str, spark: SparkSession) -> Iterator[Project]:
    with _project_slot(project_slots) as (root, tag), new_project(root, pg_admin_url, spark, tag=tag) as proj:
        yield proj
