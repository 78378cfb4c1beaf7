"""Land a run's pending files with COPY from Spark's executors, each file in its own transaction with its
mark in the partition log (extract/landing/jvm: CopyLanding.landFiles). A file Spark cannot read fails
alone and is reported; the others land."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import psycopg
from py4j.protocol import Py4JJavaError

from extract.landing.java_errors import LandingError, java_error_line
from extract.landing.progress_watch import ProgressCallback, ProgressWatch, RunTarget
from extract.landing.transfer import copy_statement
from extract.source.jdbc import java_properties
from extract.source.typemap import MappedColumn
from extract.state.partition_log import mark_landed_jdbc

if TYPE_CHECKING:
    from pyspark.sql import DataFrame


@dataclass(frozen=True)
class FileFailure:
    path: str
    #: Why, as Spark said it.
    why: str
    #: The record Spark could not read (from 1).
    record: int


def land_file_frame(
    frame: DataFrame,
    columns: list[MappedColumn],
    target: RunTarget,
    staging: tuple[str, str],
    numbers: dict[str, int],
    on_progress: ProgressCallback,
) -> list[FileFailure]:
    """Land `frame` (one whole file a Spark partition; `numbers`: each file's partition in the run's plan).
    Returns the files that could not be read; a file without rows is marked landed with none."""
    context = frame.sparkSession.sparkContext
    gateway = context._gateway
    assert gateway is not None, "a running session has a JVM"
    types = gateway.new_array(gateway.jvm.String, len(columns))
    for i, column in enumerate(columns):
        types[i] = column.target_type
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
            )
        except Exception as exc:
            if watch.failures:
                raise watch.failures[0] from None
            if isinstance(exc, Py4JJavaError):
                raise LandingError(f"landing in {staging[0]}.{staging[1]} failed: {java_error_line(exc)}") from exc
            raise
    by_number = {number: path for path, number in numbers.items()}
    failures = [FileFailure(by_number[int(r[0])], str(r[3]), int(r[4])) for r in results if r[3] is not None]
    _mark_empty(target, [n for n in numbers.values() if by_number[n] not in {f.path for f in failures}])
    watch.report_the_rest()
    return failures


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
