"""What a run depends on, passed to it explicitly: settings, the source's dialect and connections, Spark."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from extract.config.settings import Settings
from extract.landing.progress_watch import RunTarget
from extract.landing.target_pool import TargetPool
from extract.landing.transfer import PartitionSource
from extract.partitions.plan import PartitionSizing
from extract.runtime.spark import SparkRuntime
from extract.source.catalog import SourceTable
from extract.source.dialects import Dialect, dialect_for
from extract.source.jdbc import JdbcConnection
from extract.source.pool import SourcePool
from extract.source.typemap import MappedColumn

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


@dataclass(frozen=True)
class RunContext:
    settings: Settings
    dialect: Dialect
    runtime: SparkRuntime
    sources: SourcePool
    sizing: PartitionSizing
    #: The pass's connections to the target, handed from one run to the next.
    targets: TargetPool

    @classmethod
    def open(cls, settings: Settings, runtime: SparkRuntime) -> RunContext:
        """Nothing is connected yet: the first read connects (or `sources.connect_now()`)."""
        sizing = PartitionSizing(
            settings.partition_threshold, settings.max_partitions, settings.min_partition_rows, settings.partition_rows
        )
        sources = SourcePool(lambda: runtime.source_jvm, settings.source)
        targets = TargetPool(settings.target)
        return cls(settings, dialect_for(settings.source.dialect), runtime, sources, sizing, targets)

    def close(self) -> None:
        self.sources.close()
        self.targets.close()
        self.runtime.close_landing_connections()

    def run_target(self, run_id: int) -> RunTarget:
        """Where run `run_id` lands, through the pass's connections."""
        settings = self.settings
        return RunTarget(settings.target, settings.state_schema, run_id, self.targets)

    @property
    def source(self) -> JdbcConnection:
        """This thread's connection to the source."""
        return self.sources.connection()

    @property
    def spark(self) -> SparkSession:
        """The Spark session, started on first use."""
        return self.runtime.session

    def table_ref(self, table: SourceTable) -> str:
        """The table as a query names it, with the read hint the settings ask for."""
        hint = self.dialect.table_hint(self.settings.read_uncommitted)
        return self.dialect.table_ref(table.schema, table.name) + hint

    def partition_source(
        self, table: SourceTable, columns: list[MappedColumn], relation: str | None = None
    ) -> PartitionSource:
        """How the table's columns are read, in the source's dialect: from the table, or from `relation`,
        which has the table's columns (its changed rows)."""
        select_list = ", ".join(self.dialect.select_expression(c.source, c.transfer, c.target_type) for c in columns)
        source = self.settings.source
        return PartitionSource(self.runtime, self.dialect, source, relation or self.table_ref(table), select_list)

    def fits_driver(self, rows: int) -> bool:
        """Whether a run of `rows` rows is small enough to land from the driver, without a Spark job: at most
        one partition's worth (PARTITION_THRESHOLD), unless partitions of a fixed size are asked for."""
        return self.sizing.fixed_rows is None and rows <= self.sizing.threshold
