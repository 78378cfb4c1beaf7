"""Land a partitioned DataFrame in staging with COPY, from the executors, one transaction per partition.

Each Spark task streams its partition's Arrow batches as CSV into `COPY ... FROM STDIN`
and, in the same transaction, marks its partition landed in _migration.partition_log.
A partition therefore either landed whole and is recorded, or left nothing; a task
attempt that finds its partition already landed (a retry) rolls back. Memory stays at
one Arrow batch per task, whatever the table's size: nothing is collected on the driver
but one small row per partition.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import psycopg
import pyarrow as pa
import pyarrow.csv as pa_csv
from psycopg import sql
from pyspark import TaskContext
from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from extract.landing import PAGE_COLUMN, RUN_ID_COLUMN
from extract.partition_log import MARK_LANDED
from extract.typemap import MappedColumn

RESULT_SCHEMA = "partition_no int, rows_landed long, already_landed boolean"
WARM_UP_SCHEMA = "id long"
_CSV = pa_csv.WriteOptions(include_header=False, quoting_style="needed")


def staging_projection(frame: DataFrame, columns: Sequence[MappedColumn]) -> DataFrame:
    """The source columns under their target names; binary as Postgres' \\x hex text, which CSV can carry."""

    def landed(col: MappedColumn) -> Column:
        value = F.col(col.source.name)
        if col.target_type == "bytea":
            value = F.concat(F.lit("\\x"), F.lower(F.hex(value)))
        return value.alias(col.target_name)

    return frame.select(*[landed(c) for c in columns])


@dataclass(frozen=True)
class CopyLander:
    """The function each task runs (through mapInArrow); pickled to the executors."""

    target_url: str
    schema: str
    table: str
    columns: tuple[str, ...]
    run_id: int
    #: Spark partition index -> partition number in the plan.
    partition_numbers: tuple[int, ...]

    def _statement(self) -> sql.Composed:
        names = [*self.columns, RUN_ID_COLUMN, PAGE_COLUMN]
        return sql.SQL("copy {}.{} ({}) from stdin (format csv)").format(
            sql.Identifier(self.schema),
            sql.Identifier(self.table),
            sql.SQL(", ").join(map(sql.Identifier, names)),
        )

    def _csv(self, batch: pa.RecordBatch, number: int) -> pa.Buffer:
        rows = batch.num_rows
        tagged = pa.RecordBatch.from_arrays(
            [*batch.columns, pa.array([self.run_id] * rows, pa.int64()), pa.array([number] * rows, pa.int32())],
            names=[*self.columns, RUN_ID_COLUMN, PAGE_COLUMN],
        )
        sink = pa.BufferOutputStream()
        pa_csv.write_csv(tagged, sink, _CSV)
        return sink.getvalue()

    def __call__(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        context = TaskContext.get()
        assert context is not None, "CopyLander runs inside a Spark task"
        number = self.partition_numbers[context.partitionId()]
        rows = 0
        with psycopg.connect(self.target_url, autocommit=False) as conn, conn.cursor() as cursor:
            with cursor.copy(self._statement()) as copy:
                for batch in batches:
                    if batch.num_rows:
                        copy.write(self._csv(batch, number))
                        rows += batch.num_rows
            cursor.execute(MARK_LANDED, (rows, self.run_id, number))
            already = cursor.rowcount != 1
            if already:
                conn.rollback()
            else:
                conn.commit()
        yield pa.RecordBatch.from_arrays(
            [pa.array([number], pa.int32()), pa.array([rows], pa.int64()), pa.array([already])],
            names=["partition_no", "rows_landed", "already_landed"],
        )


def warm_up_task(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """A no-op task: unpickling it makes a Python worker import what CopyLander needs."""
    yield from batches
