"""The benchmarks' own durable PostgreSQL, its source and target databases, and the environment for them."""

from __future__ import annotations

import os
from dataclasses import dataclass

import psutil
import psycopg
from psycopg import sql

from bench.tidemark_sync import REPO
from extract.devtools import server

SOURCE_DB = "bench_source"
TARGET_DB = "bench_target"
DATA_DIR = REPO / ".tidemark" / "bench-pg"
WORK_DIR = REPO / ".tidemark" / "bench"
GIB = 1 << 30


def server_settings() -> dict[str, str]:
    """The server's settings: those a DBA gives a PostgreSQL that owns the machine and takes bulk loads.

    Stock settings (128 MB of shared buffers, a checkpoint every 1 GB of WAL) suit a server sharing a
    small machine; with them, a 10,000,000-row load checkpoints every few seconds and a 1 GB table
    is read from the OS' cache page by page. Every tool in the benchmark runs against this server.
    """
    memory = psutil.virtual_memory().total
    shared_buffers = min(memory // 4, 8 * GIB) // (1 << 20)
    return {
        "shared_buffers": f"{shared_buffers}MB",
        "effective_cache_size": f"{memory * 3 // 4 // (1 << 20)}MB",
        "maintenance_work_mem": "1GB",
        "work_mem": "64MB",
        "wal_buffers": "64MB",
        "min_wal_size": "4GB",
        "max_wal_size": "16GB",
        "checkpoint_timeout": "15min",
        "random_page_cost": "1.1",
        # A statement whose client is gone (a step stopped past the bound) ends within seconds, instead of
        # running on and slowing every step after it.
        "client_connection_check_interval": "5s",
        # The plan of any statement that runs a minute or more lands in the server's log: a merge
        # whose plan blew up shows why (no instrumentation: nothing else is slowed).
        "session_preload_libraries": "auto_explain",
        "auto_explain.log_min_duration": "60s",
        "auto_explain.log_nested_statements": "on",
    }


@dataclass(frozen=True)
class BenchDatabases:
    admin_url: str
    source_url: str
    target_url: str
    #: The process environment plus tidemark's connection settings for these databases.
    env: dict[str, str]

    def recreate(self, *names: str) -> None:
        """Databases `names` made anew: by default the source and the target."""
        with psycopg.connect(self.admin_url, autocommit=True) as admin:
            for name in names or (SOURCE_DB, TARGET_DB):
                admin.execute(sql.SQL("drop database if exists {} with (force)").format(sql.Identifier(name)))
                admin.execute(sql.SQL("create database {}").format(sql.Identifier(name)))

    def other_target(self, name: str) -> tuple[dict[str, str], str]:
        """Target database `name`, made anew: the environment that syncs into it, and its URL."""
        self.recreate(name)
        url = self.target_url.rsplit("/", 1)[0] + "/" + name
        return {**self.env, "TIDEMARK_TARGET_URL": url, "TIDEMARK_TARGET_DBNAME": name}, url

    def settle(self, vacuum: bool = False, also: tuple[str, ...] = ()) -> None:
        """Before a timed step: the previous step's dirty pages written out (CHECKPOINT), and with `vacuum`
        both databases (and those in `also`) vacuumed and analysed, as autovacuum leaves tables between a
        user's syncs. No step pays for the one before it."""
        for url in (self.source_url, self.target_url, *also) if vacuum else ():
            with psycopg.connect(url, autocommit=True) as conn:
                conn.execute("vacuum (analyze)")
        with psycopg.connect(self.admin_url, autocommit=True) as admin:
            admin.execute("checkpoint")


def start() -> BenchDatabases:
    """Start the server (durable, with `server_settings`) with empty databases."""
    WORK_DIR.mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("XDG_RUNTIME_DIR", str(WORK_DIR / "runtime"))
    server.stop(DATA_DIR)  # one left running from an interrupted run has other settings
    admin_url = server.start(DATA_DIR, server.free_port(), settings=server_settings())
    base = admin_url.rsplit("/", 1)[0]
    port = admin_url.rsplit(":", 1)[1].split("/", 1)[0]
    env = {
        **os.environ,
        "TIDEMARK_SOURCE_URL": f"{base}/{SOURCE_DB}",
        "TIDEMARK_TARGET_URL": f"{base}/{TARGET_DB}",
        "TIDEMARK_TARGET_HOST": "127.0.0.1",
        "TIDEMARK_TARGET_PORT": port,
        "TIDEMARK_TARGET_USER": server.SUPERUSER,
        "TIDEMARK_TARGET_DBNAME": TARGET_DB,
    }
    databases = BenchDatabases(admin_url, f"{base}/{SOURCE_DB}", f"{base}/{TARGET_DB}", env)
    databases.recreate()
    return databases


def stop() -> None:
    server.stop(DATA_DIR)
