"""Land a run's pending files with COPY from Spark's executors, a task's files in one transaction with their
marks in the partition log (extract/landing/jvm: CopyLanding.landFiles). A file Spark cannot read fails
alone and is reported; the others land."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import psycopg
from py4j.protocol import Py4JJavaError

from extract.config.file_sources import FileSource
from extract.core.sql_contract import FILE_COLUMN, FILE_ROW_COLUMN
from extract.files.reading import file_rows, packed_files, packed_size, whole_files
from extract.landing.java_errors import LandingError, java_error_line
from extract.landing.progress_watch import ProgressCallback, ProgressWatch, RunTarget
from extract.landing.transfer import copy_statement
from extract.source.jdbc import java_properties
from extract.source.typemap import MappedColumn
from extract.state.partition_log import mark_landed_jdbc

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession


@dataclass(frozen=True)
class FileFailure:
    path: str
    #: Why, as Spark said it.
    why: str
    #: The record Spark could not read (from 1); 0 for a file refused whole (a row without its key).
    record: int


@dataclass(frozen=True)
class PendingFile:
    path: str
    size: int
    #: The file's partition in the run's plan.
    number: int


def land_files(
    spark: SparkSession,
    source: FileSource,
    columns: list[MappedColumn],
    target: RunTarget,
    staging: tuple[str, str],
    files: list[PendingFile],
    on_progress: ProgressCallback,
) -> list[FileFailure]:
    """Land `files`: the small ones packed several to a task (as Spark reads them whole), the others one
    to a task; the other files of a task that failed on a file, again one to a task. Returns the files
    that could not be read; a file without rows is marked landed with none."""
    limit = packed_size(spark)
    small = [f for f in files if f.size <= limit]
    whole = [f for f in files if f.size > limit]
    failures: list[FileFailure] = []

    def land(chosen: list[PendingFile]) -> set[int]:
        frame = file_rows(spark, source, columns, [f.path for f in chosen])
        landed, failed = land_file_frame(
            frame, columns, target, staging, {f.path: f.number for f in chosen}, on_progress
        )
        failures.extend(failed)
        return landed

    if small:
        before = len(failures)
        with packed_files(spark):
            landed = land(small)
        if len(failures) > before:
            failed = {f.path for f in failures}
            whole += [f for f in small if f.number not in landed and f.path not in failed]
    if whole:
        with whole_files(spark, len(whole)):
            land(whole)
    failed = {f.path for f in failures}
    _mark_empty(target, [f.number for f in files if f.path not in failed])
    return failures


def land_file_frame(
    frame: DataFrame,
    columns: list[MappedColumn],
    target: RunTarget,
    staging: tuple[str, str],
    numbers: dict[str, int],
    on_progress: ProgressCallback,
) -> tuple[set[int], list[FileFailure]]:
    """Land `frame`, a read of whole files (`numbers`: each file's partition in the run's plan): the
    numbers of the files that landed, and the files that could not be read."""
    context = frame.sparkSession.sparkContext
    gateway = context._gateway
    assert gateway is not None, "a running session has a JVM"
    types = gateway.new_array(gateway.jvm.String, len(columns))
    for i, column in enumerate(columns):
        types[i] = column.target_type
    names = [c.target_name for c in columns]
    file_column = names.index(FILE_COLUMN)
    row_column = names.index(FILE_ROW_COLUMN) if FILE_ROW_COLUMN in names else -1
    group = f"tidemark-run-{target.run_id}"
    context.setJobGroup(group, f"tidemark run {target.run_id}: {len(numbers)} file(s)", interruptOnCancel=True)
    with ProgressWatch(context, group, target, on_progress) as watch:
        try:
            results = gateway.jvm.tidemark.landing.CopyLanding.landFiles(
                frame._jdf,
                types,
                target.url.jdbc_url,
                java_properties(gateway.jvm, target.url),
                copy_statement(staging, columns),
                mark_landed_jdbc(target.state),
                target.run_id,
                numbers,
                file_column,
                row_column,
            )
        except Exception as exc:
            if watch.failures:
                raise watch.failures[0] from None
            if isinstance(exc, Py4JJavaError):
                raise LandingError(f"landing in {staging[0]}.{staging[1]} failed: {java_error_line(exc)}") from exc
            raise
    watch.report_the_rest()
    by_number = {number: path for path, number in numbers.items()}
    rows = [[r[0], r[3], r[4]] for r in results]
    failures = [FileFailure(by_number[int(n)], str(why), int(record)) for n, why, record in rows if why is not None]
    return {int(n) for n, why, _ in rows if why is None}, failures


def _mark_empty(target: RunTarget, numbers: list[int]) -> None:
    """Files Spark read no row of (a header alone, an empty file): landed, with no row."""
    with psycopg.connect(target.url.libpq_url, autocommit=True) as conn:
        conn.execute(
            target.state.sql(
                "update {partition_log} set rows_landed = 0, landed_at = clock_timestamp()"
                " where run_id = %s and partition_no = any(%s) and landed_at is null"
            ),
            (target.run_id, numbers),
        )
