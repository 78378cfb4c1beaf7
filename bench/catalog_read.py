"""The catalog read a sync pass begins with, over 1,000 configured tables: a full read (every
table's columns) against an incremental one after one table was altered.

The tables are stamped a day back, as if created yesterday, so the default prepone window (3h)
leaves them out of an incremental read, as it would in a database whose tables were not all just
created. `python -m bench.catalog_read` runs this section alone against the bench's server.
"""

from __future__ import annotations

import shutil
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psycopg
from psycopg import sql

from bench import databases
from bench.databases import BenchDatabases
from bench.report import print_table
from bench.tidemark_sync import REPO
from extract.catalog_state.read import CatalogRead
from extract.config.settings import load_settings
from extract.devtools.ddl_times import install_ddl_times
from extract.planning.planner import Planner, open_planner
from extract.runtime.spark import SparkRuntime

TABLES = 1000
SCHEMA = "catalog_bench"
COLUMNS = (
    'id integer primary key, name varchar(100), amount numeric(12,2), note text, status varchar(20), "ModifiedDate"'
    " timestamp(3)"
)


def _create_tables(source_url: str, tables: int) -> None:
    with psycopg.connect(source_url, autocommit=True) as conn:
        install_ddl_times(conn)
        conn.execute(sql.SQL("drop schema if exists {0} cascade; create schema {0}").format(sql.Identifier(SCHEMA)))
        with conn.transaction():
            for number in range(tables):
                table = sql.Identifier(SCHEMA, f"t{number:04}")
                conn.execute(sql.SQL("create table {} ({})").format(table, sql.SQL(COLUMNS)))
        conn.execute("update tidemark_catalog.ddl_times set modified_at = modified_at - interval '1 day'")


def _project(work: Path, tables: int) -> Path:
    root = work / "catalog"
    shutil.rmtree(root, ignore_errors=True)
    shutil.copytree(REPO / "seeds", root / "seeds")
    rows = "".join(f"{SCHEMA},t{number:04}\n" for number in range(tables))
    (root / "seeds" / "sync_tables.csv").write_text("source_schema,source_table\n" + rows)
    return root


def _timed(planner: Planner, full: bool) -> tuple[float, CatalogRead]:
    """One catalog read as a pass makes it: read, then recorded."""
    started = time.perf_counter()
    done = planner.read_catalog(full)
    planner.record_catalog()
    return time.perf_counter() - started, done


def measure(bench_db: BenchDatabases, work: Path, say: Callable[[str], None], rounds: int = 3) -> dict[str, Any]:
    say(f"catalog: {TABLES:,} tables, a full read against an incremental one after one table changed")
    _create_tables(bench_db.source_url, TABLES)
    env = {**bench_db.env, "TIDEMARK_PROJECT_DIR": str(_project(work, TABLES))}
    full: list[float] = []
    incremental: list[float] = []
    described: list[int] = []
    runtime = SparkRuntime("local[1]")
    try:
        with open_planner(load_settings(env), runtime) as planner:
            _timed(planner, full=True)  # the first read, which writes the state
            for number in range(rounds):
                full.append(_timed(planner, full=True)[0])
                with psycopg.connect(bench_db.source_url, autocommit=True) as conn:
                    table = sql.Identifier(SCHEMA, f"t{number:04}")
                    added = sql.SQL("alter table {} add column {} integer").format(table, sql.Identifier("extra"))
                    conn.execute(added)
                seconds, read = _timed(planner, full=False)
                incremental.append(seconds)
                described.append(len(read.described))
    finally:
        runtime.stop()  # its JVM of the source's queries would otherwise idle through the sections after
    return {
        "tables": TABLES,
        "full_seconds": statistics.median(full),
        "incremental_seconds": statistics.median(incremental),
        "full_rounds_seconds": full,
        "incremental_rounds_seconds": incremental,
        "tables_described_incremental": described,
    }


def print_catalog(results: dict[str, Any]) -> None:
    section = results.get("catalog")
    if not section:
        return
    full, incremental = section["full_seconds"], section["incremental_seconds"]
    print_table(
        f"Catalog read of a pass over {section['tables']:,} tables (median of {len(section['full_rounds_seconds'])})",
        ("read", "seconds", "tables described", "vs full"),
        [
            ("full (--full-catalog)", f"{full:.2f}", f"{section['tables']:,}", "1.00x"),
            (
                "incremental, one table altered",
                f"{incremental:.2f}",
                ", ".join(map(str, section["tables_described_incremental"])),
                f"{incremental / full:.2f}x" if full else "-",
            ),
        ],
    )


def main() -> int:
    bench_db = databases.start()
    try:
        results = {"catalog": measure(bench_db, databases.WORK_DIR, lambda text: print(text, flush=True))}
    finally:
        databases.stop()
    print_catalog(results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
