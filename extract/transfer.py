"""Read a run's pending partitions with Spark and land them with COPY, watching the partition log meanwhile."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from functools import reduce

import psycopg
from pyspark.sql import DataFrame, SparkSession

from extract.copy_landing import RESULT_SCHEMA, CopyLander, staging_projection
from extract.dialects import Dialect
from extract.dialects.paging import partition_query
from extract.partition_log import Progress, progress
from extract.partitions import Partition, Segment, partition_filter
from extract.typemap import MappedColumn
from extract.urls import DatabaseUrl

#: Called from the watcher thread with its own connection each time more partitions have landed.
ProgressCallback = Callable[[psycopg.Connection, Progress], None]
POLL_SECONDS = 0.5


@dataclass(frozen=True)
class PartitionSource:
    """How Spark reads one table: the select list and table reference in the source's dialect."""

    spark: SparkSession
    dialect: Dialect
    url: DatabaseUrl
    table_ref: str
    select_list: str

    def frame(self, segment: Segment, partition: Partition) -> DataFrame:
        where = partition_filter(self.dialect, segment, partition)
        query = partition_query(self.table_ref, self.select_list, where)
        return (
            self.spark.read.format("jdbc")
            .option("url", self.url.jdbc_url)
            .option("query", query)
            .option("fetchsize", "10000")
            .options(**self.url.jdbc_properties())
            .load()
        )

    def frames(self, parts: list[Segment], pending: list[Partition]) -> DataFrame:
        """One DataFrame whose Spark partition i is pending[i], each read with its filter inside the query."""
        by_name = {s.name: s for s in parts}
        return reduce(DataFrame.unionAll, [self.frame(by_name[p.segment], p) for p in pending])


def land_partitions(
    source: PartitionSource,
    parts: list[Segment],
    pending: list[Partition],
    columns: list[MappedColumn],
    target: DatabaseUrl,
    staging: tuple[str, str],
    run_id: int,
    on_progress: ProgressCallback,
) -> None:
    """Land every pending partition in parallel; re-raises what the progress callback raised."""
    frame = staging_projection(source.frames(parts, pending), columns)
    numbers = [p.number for p in pending]
    land_frame(frame, numbers, [c.target_name for c in columns], target, staging, run_id, on_progress)


def land_frame(
    frame: DataFrame,
    partition_numbers: list[int],
    columns: list[str],
    target: DatabaseUrl,
    staging: tuple[str, str],
    run_id: int,
    on_progress: ProgressCallback,
) -> None:
    """Land `frame`, whose Spark partition i is partition_numbers[i] of the run's plan, with COPY."""
    lander = CopyLander(
        target_url=target.libpq_url,
        schema=staging[0],
        table=staging[1],
        columns=tuple(columns),
        run_id=run_id,
        partition_numbers=tuple(partition_numbers),
    )
    context = frame.sparkSession.sparkContext
    group = f"tidemark-run-{run_id}"
    stop = threading.Event()
    failures: list[BaseException] = []

    def watch() -> None:
        with psycopg.connect(target.libpq_url, autocommit=True) as conn:
            seen = progress(conn, run_id)
            while not stop.wait(POLL_SECONDS):
                if failures:
                    # Cancelling reaches only jobs already submitted: repeat until collect() returns.
                    context.cancelJobGroup(group)
                    continue
                current = progress(conn, run_id)
                if current == seen:
                    continue
                seen = current
                try:
                    on_progress(conn, current)
                except BaseException as exc:  # handed to the main thread, which re-raises it
                    failures.append(exc)
                    context.cancelJobGroup(group)

    watcher = threading.Thread(target=watch, name=f"tidemark-watch-{run_id}", daemon=True)
    context.setJobGroup(group, f"tidemark run {run_id}: {len(partition_numbers)} partition(s)", interruptOnCancel=True)
    watcher.start()
    try:
        frame.mapInArrow(lander, RESULT_SCHEMA).collect()
    except Exception:
        if failures:
            raise failures[0] from None
        raise
    finally:
        stop.set()
        watcher.join()
    if failures:
        raise failures[0]
