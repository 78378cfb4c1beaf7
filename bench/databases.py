"""The benchmarks' own durable PostgreSQL, its source and target databases, and the environment for them."""

from __future__ import annotations

import os
from dataclasses import dataclass

import psycopg
from psycopg import sql

from bench.tidemark_sync import REPO
from extract import server

SOURCE_DB = "bench_source"
TARGET_DB = "bench_target"
DATA_DIR = REPO / ".tidemark" / "bench-pg"
WORK_DIR = REPO / ".tidemark" / "bench"


@dataclass(frozen=True)
class BenchDatabases:
    admin_url: str
    source_url: str
    target_url: str
    #: The process environment plus tidemark's connection settings for these databases.
    env: dict[str, str]

    def recreate(self) -> None:
        with psycopg.connect(self.admin_url, autocommit=True) as admin:
            for name in (SOURCE_DB, TARGET_DB):
                admin.execute(sql.SQL("drop database if exists {} with (force)").format(sql.Identifier(name)))
                admin.execute(sql.SQL("create database {}").format(sql.Identifier(name)))


def start() -> BenchDatabases:
    """Start the server (durable settings, like a real target) with empty databases."""
    WORK_DIR.mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("XDG_RUNTIME_DIR", str(WORK_DIR / "runtime"))
    admin_url = server.start(DATA_DIR, server.free_port())
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
