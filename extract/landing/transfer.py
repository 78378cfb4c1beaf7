"""Land a run's pending partitions with COPY: read in parallel by Spark, watching the partition log
meanwhile, or, for a batch of one partition's size, without a Spark job (in the source's JVM)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import reduce
from typing import TYPE_CHECKING, Any

from psycopg import sql
from py4j.protocol import Py4JJavaError

from extract.config.urls import DatabaseUrl
from extract.core.sql_contract import PARTITION_COLUMN, RUN_ID_COLUMN
from extract.landing.java_errors import LandingError, java_error_line
from extract.landing.progress_watch import ProgressCallback, ProgressWatch, RunTarget
from extract.partitions.plan import Partition, Segment
from extract.runtime.spark import SparkRuntime
from extract.source.dialects import Dialect
from extract.source.dialects.partition_sql import order_aliases, range_filter, segment_query
from extract.source.jdbc import java_properties, jvm_error
from extract.source.typemap import MappedColumn
from extract.state.partition_log import mark_landed_jdbc, progress

if TYPE_CHECKING:
    from pyspark.sql import DataFrame


@dataclass(frozen=True)
class PartitionSource:
    """How one table is read: the select list and table reference in the source's dialect."""

    runtime: SparkRuntime
    dialect: Dialect
    url: DatabaseUrl
    table_ref: str
    select_list: str
    #: Rows fetched from the source at a time.
    fetch_rows: int = 10_000

    def fetching(self, rows: int) -> PartitionSource:
        """The same reads, `rows` rows a fetch (a retry reads smaller pages)."""
        return replace(self, fetch_rows=rows)

    def frames(self, parts: list[Segment], pending: list[Partition]) -> tuple[DataFrame, list[int]]:
        """One DataFrame of the pending partitions, and the partition number of each of its Spark
        partitions in order: one JDBC relation per segment, one Spark partition per filter."""
        by_segment: dict[str, list[Partition]] = {}
        for partition in pending:
            by_segment.setdefault(partition.segment, []).append(partition)
        by_name = {s.name: s for s in parts}
        frames = [self._segment_frame(by_name[name], partitions) for name, partitions in by_segment.items()]
        numbers = [p.number for partitions in by_segment.values() for p in partitions]
        return reduce(lambda united, frame: united.unionAll(frame), frames), numbers

    def relation(self, segment: Segment) -> str:
        """The segment's rows as a relation: its columns, then its order columns under their aliases."""
        query = segment_query(self.dialect, self.table_ref, self.select_list, segment.order, segment.base)
        return f"({query}) tidemark_segment"

    def partition_filter(self, segment: Segment, partition: Partition) -> str:
        return range_filter(self.dialect, order_aliases(segment.order), "", partition.start, partition.end)

    def _segment_frame(self, segment: Segment, partitions: list[Partition]) -> DataFrame:
        # One relation: Spark asks the source for its columns once, not once per partition.
        try:
            frame = self.runtime.session.read.jdbc(
                self.url.jdbc_url,
                self.relation(segment),
                predicates=[self.partition_filter(segment, p) for p in partitions],
                properties={"fetchsize": str(self.fetch_rows), **self.url.jdbc_properties()},
            )
        except Py4JJavaError as exc:
            raise LandingError(f"reading {self.table_ref} failed: {java_error_line(exc)}") from exc
        return frame.drop(*(a.name for a in order_aliases(segment.order)))


def land_partitions(
    source: PartitionSource,
    parts: list[Segment],
    pending: list[Partition],
    columns: list[MappedColumn],
    target: RunTarget,
    staging: tuple[str, str],
    on_progress: ProgressCallback,
    *,
    tagged: bool = True,
) -> None:
    """Land every pending partition in parallel; re-raises what the progress callback raised."""
    frame, numbers = source.frames(parts, pending)
    land_frame(frame, numbers, columns, target, staging, on_progress, tagged=tagged)


def copy_statement(staging: tuple[str, str], columns: list[MappedColumn], *, tagged: bool = True) -> str:
    """COPY into landing table `staging` (schema, name): the columns, then (when `tagged`) the run and
    the partition. A first sync's table is not tagged: it holds one run's rows, and the run's id joins
    it as a column default when it becomes staging (extract/landing/first_sync.py, promote)."""
    names = [c.target_name for c in columns] + ([RUN_ID_COLUMN, PARTITION_COLUMN] if tagged else [])
    return (
        sql.SQL("copy {}.{} ({}) from stdin")
        .format(sql.Identifier(staging[0]), sql.Identifier(staging[1]), sql.SQL(", ").join(map(sql.Identifier, names)))
        .as_string(None)
    )


def _landing_error(staging: tuple[str, str], exc: Py4JJavaError) -> LandingError:
    return LandingError(f"landing in {staging[0]}.{staging[1]} failed: {java_error_line(exc)}")


def _java_array(gateway: Any, java_type: str, values: Sequence[object]) -> Any:
    array = gateway.new_array(getattr(gateway.jvm, java_type), len(values))
    for i, value in enumerate(values):
        array[i] = value
    return array


def _target_types(gateway: Any, columns: list[MappedColumn]) -> Any:
    """The columns' Postgres types as a Java String[], as the landing classes take them."""
    return _java_array(gateway, "String", [c.target_type for c in columns])


def _gateway(frame: DataFrame) -> Any:
    gateway = frame.sparkSession.sparkContext._gateway
    assert gateway is not None, "a running session has a JVM"
    return gateway


def land_in_driver(
    source: PartitionSource,
    parts: list[Segment],
    pending: list[Partition],
    columns: list[MappedColumn],
    target: RunTarget,
    staging: tuple[str, str],
    on_progress: ProgressCallback,
    *,
    tagged: bool = True,
) -> None:
    """Land the pending partitions one after another without a Spark job (extract/landing/jvm's
    DriverLanding), in the source's JVM or Spark's driver if it runs: each in its own transaction with its
    mark, as a Spark task lands it."""
    gateway = source.runtime.landing_gateway
    lander = gateway.jvm.tidemark.landing.DriverLanding
    by_name = {s.name: s for s in parts}
    target_types = _target_types(gateway, columns)
    source_properties = java_properties(gateway.jvm, source.url)
    source_properties.setProperty("fetchsize", str(source.fetch_rows))
    target_properties = java_properties(gateway.jvm, target.url)
    statement = copy_statement(staging, columns, tagged=tagged)
    with target.connections.connection(autocommit=True) as conn:
        for partition in pending:
            segment = by_name[partition.segment]
            try:
                lander.land(
                    source.url.jdbc_url,
                    source_properties,
                    source.relation(segment),
                    source.partition_filter(segment, partition),
                    target_types,
                    target.url.jdbc_url,
                    target_properties,
                    statement,
                    mark_landed_jdbc(target.state),
                    target.run_id,
                    tagged,
                    partition.number,
                )
            except Exception as exc:
                java = jvm_error(exc)
                if java is None:
                    raise
                raise _landing_error(staging, java) from java
            on_progress(conn, progress(conn, target.state, target.run_id))


def land_frame(
    frame: DataFrame,
    partition_numbers: list[int],
    columns: list[MappedColumn],
    target: RunTarget,
    staging: tuple[str, str],
    on_progress: ProgressCallback,
    *,
    tagged: bool = True,
) -> None:
    """Land `frame` (one column per entry of `columns`, in order), whose Spark partition i is
    partition_numbers[i] of the run's plan, with COPY from the executors (extract/landing/jvm)."""
    context = frame.sparkSession.sparkContext
    gateway = _gateway(frame)
    run_id = target.run_id
    group = f"tidemark-run-{run_id}"
    context.setJobGroup(group, f"tidemark run {run_id}: {len(partition_numbers)} partition(s)", interruptOnCancel=True)
    with ProgressWatch(context, group, target, on_progress) as watch:
        try:
            gateway.jvm.tidemark.landing.CopyLanding.land(
                frame._jdf,
                _target_types(gateway, columns),
                target.url.jdbc_url,
                java_properties(gateway.jvm, target.url),
                copy_statement(staging, columns, tagged=tagged),
                mark_landed_jdbc(target.state),
                run_id,
                tagged,
                _java_array(gateway, "int", partition_numbers),
            )
        except Exception as exc:
            if watch.failures:
                raise watch.failures[0] from None
            if isinstance(exc, Py4JJavaError):
                raise _landing_error(staging, exc) from exc
            raise
    watch.report_the_rest()
