"""The source's side of a reconcile: its figures and pairs, read from the driver or, for a large table,
by Spark, one task per key range, so that a reconcile runs on a cluster as a sync does."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from functools import reduce
from itertools import pairwise

from py4j.protocol import Py4JJavaError

from extract.core.errors import SourceError
from extract.landing.java_errors import java_error_line
from extract.lifecycle.context import RunContext
from extract.partitions.plan import Segment, plan_partitions
from extract.planning.table_plan import TablePlan
from extract.reconcile.boundary import KeyBounds
from extract.reconcile.hashes import RowHashes
from extract.reconcile.queries import HashedRelation, level_query, pairs_query
from extract.reconcile.tree import Figures, HashSpace, Level, Node
from extract.source.dialects.partition_sql import range_filter

#: Source rows as text: key text, row hash, the key's positions, then whether the cursor is recent.
SourcePair = tuple[str | None, ...]


def source_relation(context: RunContext, plan: TablePlan, hashes: RowHashes, recent: str | None) -> HashedRelation:
    """The source table with its hashes; `recent` (SQL, or None without a cursor) is true for a row the
    next sync reads anyway."""
    dialect = context.dialect
    keys = plan.source_keys
    null_key = " or ".join(f"{dialect.quote(c.name)} is null" for c in keys)
    extra = [dialect.position_text(c) for c in keys]
    if recent is not None:
        extra.append(f"case when {recent} then 'recent' else 'old' end")
    return HashedRelation(
        dialect=dialect,
        relation=context.table_ref(plan.table),
        key_hash=hashes.source_key,
        row_hash=hashes.source_row,
        key_text=hashes.source_key_text,
        null_key=f"case when {null_key} then 1 else 0 end",
        extra=tuple(extra),
    )


def source_ranges(context: RunContext, plan: TablePlan, bounds: KeyBounds | None, rows: int) -> list[str]:
    """Key-range filters, one Spark task each, cut as a sync would cut `rows` rows; [""] (one query from
    the driver) for a table of at most TIDEMARK_RECONCILE_DRIVER_ROWS rows (unless partitions of a fixed
    size are asked for). A whole-number key is cut into equal spans of its [min, max]
    (nothing to sort); any other key where a sync would cut it (one ordered read of the keys)."""
    size = context.sizing.rows_per_partition(rows)
    small = context.sizing.fixed_rows is None and rows <= context.settings.reconcile.driver_rows
    if size is None or small or context.fits_driver(rows):
        return [""]
    keys = plan.source_keys
    if bounds is not None and bounds.low is not None and bounds.high is not None and bounds.whole_numbers:
        low, high, count = int(bounds.low), int(bounds.high), max(1, -(-rows // size))
        cuts = [(str(low + (high - low) * i // count),) for i in range(1, count)]
        ends: list[tuple[str, ...] | None] = [None, *cuts, None]
        return [range_filter(context.dialect, keys[:1], "", start, end) for start, end in pairwise(ends)]
    partitions, _ = plan_partitions(
        context.source,
        context.dialect,
        context.table_ref(plan.table),
        [Segment("all", tuple(keys), "")],
        context.sizing,
    )
    return [range_filter(context.dialect, keys, "", p.start, p.end) for p in partitions]


@dataclass
class SourceSide:
    context: RunContext
    side: HashedRelation
    space: HashSpace
    #: Key-range filters, one Spark task each; [""]: one query from the driver.
    ranges: Sequence[str]

    def level(self, level: Level) -> dict[int, Figures]:
        figures: dict[int, Figures] = {}
        queries = [level_query(self.side, self.space, level, within) for within in self.ranges]
        for row in self._read(queries, by_node=True):
            node, rows, checksum, null_keys = (_integer(v) for v in row)
            figures[node] = figures.get(node, Figures()) + Figures(rows, checksum, null_keys)
        return figures

    def pairs(self, leaves: Sequence[Node]) -> list[SourcePair]:
        return self._read([pairs_query(self.side, self.space, leaves, within) for within in self.ranges])

    def _read(self, queries: list[str], by_node: bool = False) -> list[tuple[str | None, ...]]:
        """The rows of `queries`; with `by_node`, a level's figures summed over the key ranges in Spark,
        so that the driver receives one row per range of the hash space, not one per key range too."""
        if len(queries) == 1:
            return self.context.source.query(queries[0])
        url = self.context.settings.source
        session = self.context.spark  # Spark only for what is large: a pass that reads little never imports it
        from pyspark.sql import functions

        try:
            frames = [
                session.read.jdbc(url.jdbc_url, f"({q}) tidemark_reconcile", properties=url.jdbc_properties())
                for q in queries
            ]
            united = reduce(lambda together, frame: together.unionAll(frame), frames)
            if by_node:
                node, *figures = united.columns
                united = united.groupBy(node).agg(*(functions.sum(name).alias(name) for name in figures))
            collected = united.collect()
        except Py4JJavaError as exc:
            raise SourceError(f"reading {self.side.relation} failed: {java_error_line(exc)}") from exc
        return [tuple(None if v is None else _text(v) for v in row) for row in collected]


def _text(value: object) -> str:
    return str(int(value)) if isinstance(value, Decimal) else str(value)


def _integer(value: str | None) -> int:
    return 0 if value is None else int(Decimal(value))
