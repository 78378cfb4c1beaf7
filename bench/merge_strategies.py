"""distinct_merge against dbt's built-in `merge` and `delete+insert`: one batch of every row, 1% changed.

Each strategy gets its own copy of the replica and the same batch: distinct_merge through
tidemark's replica materialization, the others through dbt's incremental one; what differs is
the statement that applies the batch.
Between runs: a CHECKPOINT (so full-page images weigh the same for each) and
autovacuum off on the copies (so the dead tuples left stay countable).
"""

from __future__ import annotations

import json
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

import psycopg
from psycopg import sql

from bench.measure import run
from bench.tidemark_sync import DBT, REPO
from extract.project.package import PACKAGE_FOLDER, install_package

SCHEMA = "merge_cmp"
STRATEGIES = ("distinct_merge", "merge", "delete+insert")

_PROJECT = """\
name: tidemark_merge_cmp
version: "0.1.0"
config-version: 2
profile: tidemark
macro-paths: ["macros"]
model-paths: ["models"]
flags:
  send_anonymous_usage_stats: false
dispatch:
  - macro_namespace: dbt
    search_order: ["tidemark_merge_cmp", "tidemark", "dbt"]
# Only the strategies' models: the package's state model reads seeds this project has not.
models:
  tidemark:
    +enabled: false
"""

_SOURCES = f"""\
version: 2
sources:
  - name: {SCHEMA}
    schema: {SCHEMA}
    tables:
      - name: batch
"""

_MODEL = """\
{{{{ config({materialized}, unique_key=['id'], schema='{schema}', on_schema_change='ignore') }}}}

select * from {{{{ source('{schema}', 'batch') }}}}
"""


@dataclass(frozen=True)
class StrategyResult:
    strategy: str
    seconds: float
    wal_bytes: int
    dead_tuples: int
    rows_changed_in_target: int


def _model_name(strategy: str) -> str:
    return "apply_" + strategy.replace("+", "_").replace("distinct_merge", "distinct")


def _write_project(root: Path) -> None:
    shutil.rmtree(root, ignore_errors=True)
    (root / "models").mkdir(parents=True)
    (root / "macros").mkdir()
    install_package(root, REPO / PACKAGE_FOLDER)
    shutil.copy(REPO / "profiles.yml.example", root / "profiles.yml")
    (root / "dbt_project.yml").write_text(_PROJECT)
    (root / "models" / "_merge_cmp__sources.yml").write_text(_SOURCES)
    for strategy in STRATEGIES:
        materialized = (
            "materialized='tidemark_replica'"
            if strategy == "distinct_merge"
            else f"materialized='incremental', incremental_strategy='{strategy}'"
        )
        body = _MODEL.format(materialized=materialized, schema=SCHEMA)
        (root / "models" / f"{_model_name(strategy)}.sql").write_text(body)


def _prepare(conn: psycopg.Connection, replica: sql.Composable, percent: int) -> None:
    """The batch (every replica row, `percent`% changed) and one copy of the replica per strategy."""
    schema = sql.Identifier(SCHEMA)
    conn.execute(sql.SQL("drop schema if exists {} cascade").format(schema))
    conn.execute(sql.SQL("create schema {}").format(schema))
    conn.execute(sql.SQL("create unlogged table {}.batch as select * from {}").format(schema, replica))
    conn.execute(
        sql.SQL("update {}.batch set amount = amount + 1, status = 'recounted' where id %% %s = 0").format(schema),
        (100 // percent,),
    )
    for strategy in STRATEGIES:
        name = sql.Identifier(_model_name(strategy))
        conn.execute(sql.SQL("create table {}.{} (like {} including all)").format(schema, name, replica))
        conn.execute(sql.SQL("insert into {}.{} select * from {}").format(schema, name, replica))
        conn.execute(sql.SQL("alter table {}.{} set (autovacuum_enabled = false)").format(schema, name))
    conn.execute(sql.SQL("vacuum analyze {}.batch").format(schema))
    for strategy in STRATEGIES:
        conn.execute(sql.SQL("vacuum analyze {}.{}").format(schema, sql.Identifier(_model_name(strategy))))


def _wal_lsn(conn: psycopg.Connection) -> str:
    row = conn.execute("select pg_current_wal_lsn()::text").fetchone()
    assert row is not None
    return str(row[0])


def _table_stats(conn: psycopg.Connection, name: str) -> tuple[int, int]:
    """(dead tuples, tuples inserted + updated + deleted) of a copy, once the writer's stats are flushed."""
    # This session's own writes (the copy made by _prepare) count only once flushed to the shared stats.
    conn.execute("select pg_stat_force_next_flush()")
    row = conn.execute(
        "select n_dead_tup, n_tup_ins + n_tup_upd + n_tup_del from pg_stat_user_tables"
        " where schemaname = %s and relname = %s",
        (SCHEMA, name),
    ).fetchone()
    assert row is not None
    return int(row[0]), int(row[1])


def compare(
    work: Path, env: dict[str, str], target_url: str, replica: tuple[str, str], percent: int
) -> list[StrategyResult]:
    root = work / "merge-cmp"
    _write_project(root)
    env = {**env, "DBT_PROFILES_DIR": str(root), "DBT_SEND_ANONYMOUS_USAGE_STATS": "false"}
    results = []
    with psycopg.connect(target_url, autocommit=True) as conn:
        _prepare(conn, sql.Identifier(*replica), percent)
        for strategy in STRATEGIES:
            name = _model_name(strategy)
            _, writes_before = _table_stats(conn, name)
            conn.execute("checkpoint")
            before = _wal_lsn(conn)
            command = [DBT, "run", "--project-dir", str(root), "--select", name]
            run(command, env, root, f"dbt run ({strategy})")
            after = _wal_lsn(conn)
            wal = conn.execute("select pg_wal_lsn_diff(%s, %s)", (after, before)).fetchone()
            time.sleep(1.5)  # the dbt session flushed its table statistics when it closed
            dead, writes_after = _table_stats(conn, name)
            timing = json.loads((root / "target" / "run_results.json").read_text())["results"][0]
            results.append(
                StrategyResult(
                    strategy=strategy,
                    seconds=float(timing["execution_time"]),
                    wal_bytes=int(wal[0]) if wal else 0,
                    dead_tuples=dead,
                    rows_changed_in_target=writes_after - writes_before,
                )
            )
    return results
