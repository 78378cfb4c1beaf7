"""The lake copy: `dbt build --target spark --select lake` (dbt-spark, session method) writes each
replica and history as Parquet partitioned by sync date; Spark reads it back equal to Postgres."""

from __future__ import annotations

import re
import uuid
from datetime import UTC, date, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

from psycopg import sql
from pyspark.sql import SparkSession

from extract.devtools.demo.changes import apply_changes
from extract.project.generate import LAKE_SUFFIX
from tests.conftest import Project
from tests.demo_fixture import demo

__all__ = ["demo"]
LAKE_SCHEMA = "lake_copy"


def _plain(value: Any) -> Any:
    """One value as both sides can agree on it: Parquet through Spark and Postgres through psycopg."""
    if isinstance(value, Decimal):
        return format(value.normalize(), "f")
    if isinstance(value, datetime):
        return (value.astimezone(UTC).replace(tzinfo=None) if value.tzinfo else value).isoformat()
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value).hex()
    if isinstance(value, (uuid.UUID, date)):
        return str(value)
    return value


def _replica_rows(project: Project, schema: str, table: str) -> list[tuple[Any, ...]]:
    with project.target() as conn:
        rows = conn.execute(sql.SQL("select * from {}.{}").format(sql.Identifier(schema), sql.Identifier(table)))
        return sorted((tuple(_plain(v) for v in row) for row in rows), key=repr)


def _lake_rows(spark: SparkSession, folder: Path) -> dict[str, list[tuple[Any, ...]]]:
    """Rows per sync-date partition of one lake table, read from its Parquet files."""
    partitions = sorted(p.name.split("=", 1)[1] for p in folder.glob("_tidemark_sync_date=*"))
    frame = spark.read.parquet(str(folder))
    columns = [c for c in frame.columns if c != "_tidemark_sync_date"]
    return {
        day: sorted(
            (
                tuple(_plain(v) for v in row)
                for row in frame.where(frame["_tidemark_sync_date"] == day).select(*columns).collect()
            ),
            key=repr,
        )
        for day in partitions
    }


def _build_lake(project: Project, *select: str) -> dict[str, int]:
    done = project.dbt("build", "--target", "spark", *select)
    summary = re.search(r"PASS=(\d+) WARN=(\d+) ERROR=(\d+) SKIP=(\d+)", done.stdout)
    assert summary is not None, done.stdout[-3000:]
    return dict(zip(("pass", "warn", "error", "skip"), map(int, summary.groups()), strict=True))


def _latest_equals_replicas(
    project: Project, spark: SparkSession, warehouse: Path, copies: dict[str, str]
) -> dict[str, list[str]]:
    """Check that each lake table's latest partition equals its relation in Postgres; the partitions."""
    days = {}
    for model, table in copies.items():
        partitions = _lake_rows(spark, warehouse / f"{LAKE_SCHEMA}.db" / model)
        days[model] = sorted(partitions)
        rows = partitions[max(partitions)]
        assert rows == _replica_rows(project, f"demo__{project.source_db}__dbo", table), model
        assert len(rows) > 0, model
    return days


def _today() -> str:
    return datetime.now(UTC).date().isoformat()


def test_lake_copies_replicas_and_histories_as_parquet(demo: Project, spark: SparkSession, tmp_path: Path) -> None:
    demo.sync()
    models = sorted(p.stem for p in (demo.root / "models" / "lake").glob(f"*{LAKE_SUFFIX}.sql"))
    prefix = f"demo__{demo.source_db}__dbo__"
    copies = {m: m.removeprefix(prefix).removesuffix(LAKE_SUFFIX) for m in models}
    assert "customers__history" in copies.values() and "customers" in copies.values()
    demo.env.update({"TIDEMARK_LAKE_DIR": str(tmp_path / "lake"), "TIDEMARK_SPARK_SCHEMA": LAKE_SCHEMA})
    warehouse = tmp_path / "lake" / "warehouse"

    before = _today()
    assert _build_lake(demo, "--select", "lake") == {"pass": len(models), "warn": 0, "error": 0, "skip": 0}
    days = _latest_equals_replicas(demo, spark, warehouse, copies)
    (day,) = {d for partitions in days.values() for d in partitions}
    assert before <= day <= _today()

    with demo.source() as conn:
        changed = apply_changes(conn, seed=11)
    assert sum(changed.values()) > 0
    demo.sync()
    # The whole project on the spark target: only the lake runs there, and nothing fails.
    assert _build_lake(demo) == {"pass": len(models), "warn": 0, "error": 0, "skip": 0}
    days = _latest_equals_replicas(demo, spark, warehouse, copies)
    # Built again the same day, a partition is overwritten, not appended to.
    assert all(
        partitions[0] == day and len(partitions) == (1 if _today() == day else 2) for partitions in days.values()
    )
