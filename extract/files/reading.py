"""A file source's files read by Spark: their schema, and their rows as the replica's columns, no file split
between two tasks (so that each file lands, and fails, alone)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from py4j.protocol import Py4JJavaError

from extract.config.file_sources import FileSource
from extract.core.errors import TidemarkError
from extract.core.sql_contract import FILE_COLUMN, FILE_ROW_COLUMN
from extract.landing.java_errors import java_error_line
from extract.source.typemap import MappedColumn

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame, DataFrameReader, SparkSession

#: How many of a run's CSV files their columns' types are guessed from, when the replica does not say them.
INFER_FROM_FILES = 8
_GLOB_CHARACTERS = re.compile(r"([\\*?\[\]{}])")
_NESTED = ("struct<", "array<", "map<")


def glob_escaped(path: str) -> str:
    """The path as Spark's loader takes it literally: it reads a path with glob characters as a glob."""
    return _GLOB_CHARACTERS.sub(r"\\\1", path)


def _reader(spark: SparkSession, source: FileSource) -> DataFrameReader:
    reader = spark.read.format(source.format).option("mode", "FAILFAST")
    if source.format == "csv":
        csv = source.csv
        reader = (
            reader.option("header", str(csv.header).lower())
            .option("sep", csv.delimiter)
            .option("quote", csv.quote)
            .option("escape", csv.quote)  # RFC 4180: a quote inside a quoted value is doubled
            .option("encoding", csv.encoding)
            .option("enforceSchema", "false")  # a header that is not the columns fails its file
            # A quoted value may hold a line break; a file is read by one task anyway, never split.
            .option("multiLine", "true")
        )
    return reader


def file_fields(spark: SparkSession, source: FileSource, paths: list[str]) -> list[tuple[str, str]]:
    """(name, Spark type) of the files' columns: Parquet's own, CSV's and JSON's guessed from a few files."""
    reader = _reader(spark, source)
    if source.format == "parquet":
        reader = reader.option("mergeSchema", "true")
        chosen = paths
    else:
        # A CSV file's header is checked against the columns: a column new past the first files fails its
        # file. A JSON file's new field would be read as nothing: every file is read for its fields.
        reader = reader.option("inferSchema", "true")
        chosen = paths[:INFER_FROM_FILES] if source.format == "csv" else paths
    try:
        with _listed_on_the_driver(spark):
            schema = reader.load([glob_escaped(p) for p in chosen]).schema
    except Py4JJavaError as exc:
        raise TidemarkError(f"{source.key}: reading the files' columns failed: {java_error_line(exc)}") from None
    return [(f.name, _spark_type(f.dataType.simpleString())) for f in schema.fields]


def _spark_type(simple: str) -> str:
    return "json" if simple.startswith(_NESTED) else simple


def _quoted(name: str) -> str:
    """A column name as Spark's SQL names it: in backticks, each backtick in it doubled."""
    return "`" + name.replace("`", "``") + "`"


def _ddl(columns: list[MappedColumn]) -> str:
    kinds = [("string" if c.source.base_type == "json" else c.source.type_text) for c in columns]
    return ", ".join(f"{_quoted(c.source.name)} {kind}" for c, kind in zip(columns, kinds, strict=True))


def file_rows(spark: SparkSession, source: FileSource, columns: list[MappedColumn], paths: list[str]) -> DataFrame:
    """The rows of the files at `paths` as `columns`, in order: each data column by name (a column a file
    lacks is NULL, in JSON and Parquet), then the file's path and, without a key, the row's place in it."""
    from pyspark.sql import functions as F

    data = [c for c in columns if c.target_name not in (FILE_COLUMN, FILE_ROW_COLUMN)]
    reader = _reader(spark, source)
    if source.format != "parquet":
        reader = reader.schema(_ddl(data))
    with _listed_on_the_driver(spark):
        frame = reader.load([glob_escaped(p) for p in paths])
    names = {name.lower(): name for name in frame.columns}
    chosen: list[Column] = []
    for column in data:
        found = names.get(column.source.name.lower())
        value = F.lit(None) if found is None else frame[_quoted(found)]
        if column.source.base_type == "json" and source.format == "parquet" and found is not None:
            value = F.to_json(value)
        kind = "string" if column.source.base_type == "json" else column.source.type_text
        chosen.append(value.cast(kind).alias(column.target_name))
    # Written as the rows land (extract/landing/jvm: FileLander), which knows each row's file and place.
    chosen.append(F.lit("").alias(FILE_COLUMN))
    if any(c.target_name == FILE_ROW_COLUMN for c in columns):
        chosen.append(F.lit(0).cast("bigint").alias(FILE_ROW_COLUMN))
    return frame.select(*chosen)


@contextmanager
def _listed_on_the_driver(spark: SparkSession) -> Iterator[None]:
    """While a read of listed files is set up: Spark looks each path up from the driver. Past 32 paths it
    would run a Spark job of a task a path to look them up (27 s for 10,000 files on two cores), when the
    paths are the files a listing just found."""
    with _session_conf(spark, {"spark.sql.sources.parallelPartitionDiscovery.threshold": str(1 << 30)}):
        yield


@contextmanager
def _session_conf(spark: SparkSession, values: dict[str, str]) -> Iterator[None]:
    before = {key: spark.conf.get(key, None) for key in values}
    for key, value in values.items():
        spark.conf.set(key, value)
    try:
        yield
    finally:
        for key, value in before.items():
            if value is None:
                spark.conf.unset(key)
            else:
                spark.conf.set(key, value)


def packed_size(spark: SparkSession) -> int:
    """The size up to which Spark reads a file whole and packs several in a task: its open cost (a file is
    split only when larger than the split size, which is never below the open cost)."""
    return _bytes_setting(spark, "spark.sql.files.openCostInBytes", "4194304")


def _bytes_setting(spark: SparkSession, name: str, default: str) -> int:
    """A size setting of the session (such as "4m" or "134217728"), in bytes, as Spark reads it."""
    text = spark.conf.get(name, default) or default
    return int(spark.sparkContext._jvm.org.apache.spark.network.util.JavaUtils.byteStringAsBytes(text))


#: Spark skips a file it cannot read or finds gone when these are set: it would be checkpointed unread.
_NO_SKIPPING = {"spark.sql.files.ignoreCorruptFiles": "false", "spark.sql.files.ignoreMissingFiles": "false"}


@contextmanager
def packed_files(spark: SparkSession) -> Iterator[None]:
    """While a read of files no larger than `packed_size` is planned: none is split (the partition size is at
    least the open cost, below which Spark splits no file), several share a task, none is skipped."""
    size = _bytes_setting(spark, "spark.sql.files.maxPartitionBytes", "134217728")
    largest = str(max(size, packed_size(spark)))
    with _session_conf(spark, {**_NO_SKIPPING, "spark.sql.files.maxPartitionBytes": largest}):
        yield


@contextmanager
def whole_files(spark: SparkSession, files: int) -> Iterator[None]:
    """While a read is planned: every file is one Spark partition, never split nor packed with another, nor
    skipped. Spark splits a file at its partition size and packs small ones up to it, each counted at least
    the open cost: both as large as a sum of them can be without overflowing a long."""
    size = str((1 << 62) // (files + 2))
    values = {**_NO_SKIPPING, "spark.sql.files.maxPartitionBytes": size, "spark.sql.files.openCostInBytes": size}
    with _session_conf(spark, values):
        yield
