"""Read a snapshot file (CSV with a header, or Parquet) with Spark, as the landing table's columns."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from extract.core.errors import TidemarkError
from extract.source.typemap import MappedColumn

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame, SparkSession

FORMATS = {".csv": "csv", ".parquet": "parquet", ".pq": "parquet"}


def file_format(path: Path) -> str:
    """csv or parquet, from the name of the file (or of the files in a folder, as Spark writes them)."""
    if not path.exists():
        raise TidemarkError(f"snapshot file {str(path)!r} does not exist")
    names = (
        [path] if path.is_file() else [p for p in path.iterdir() if p.is_file() and not p.name.startswith((".", "_"))]
    )
    found = {FORMATS.get(p.suffix.lower()) for p in names}
    if len(found) != 1 or None in found:
        raise TidemarkError(
            f"snapshot file {str(path)!r}: cannot tell its format; name it *.csv (with a header row) or *.parquet"
        )
    return str(found.pop())


def read_snapshot_file(spark: SparkSession, path: Path, columns: list[MappedColumn]) -> DataFrame:
    """The file's rows under the table's target column names.

    Columns are matched by name, case-insensitively, to the source's or the replica's
    column names; a column missing from the file, or one the table does not have, is an
    error, since a snapshot must be the whole table. CSV values are kept as text for the
    target to parse; bytea in CSV is Postgres' \\x hex text.
    """
    fmt = file_format(path)
    reader = spark.read
    if fmt == "csv":  # RFC 4180: a quote inside a quoted value is doubled
        reader = reader.option("header", "true").option("multiLine", "true").option("escape", '"')
    frame = reader.format(fmt).load(str(path))
    by_name = {name.lower(): name for name in frame.columns}
    chosen: list[Column] = []
    missing: list[str] = []
    used: set[str] = set()
    for col in columns:
        name = by_name.get(col.source.name.lower()) or by_name.get(col.target_name.lower())
        if name is None:
            missing.append(col.source.name)
            continue
        used.add(name)
        chosen.append(frame[name].alias(col.target_name))
    unknown = sorted(set(frame.columns) - used)
    if missing or unknown:
        problems = []
        if missing:
            problems.append(f"missing column(s) {', '.join(missing)}")
        if unknown:
            problems.append(f"column(s) the table does not have: {', '.join(unknown)}")
        raise TidemarkError(f"snapshot file {str(path)!r}: {'; '.join(problems)}")
    return frame.select(*chosen)
