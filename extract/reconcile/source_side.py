"""The source's side of a reconcile: its figures and pairs. A large table whose key is placed by offset
is read in key ranges, several at once on pooled source connections: aggregates and (key, hash) pairs
are small answers, and Spark is left for what is large, the re-read of the rows to repair
(extract/reconcile/repair.py)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from decimal import Decimal
from itertools import pairwise
from typing import TypeVar

from extract.lifecycle.context import RunContext
from extract.planning.table_plan import TablePlan
from extract.reconcile.boundary import KeyBounds
from extract.reconcile.hashes import RowHashes
from extract.reconcile.queries import HashedRelation, level_query, pairs_query
from extract.reconcile.tree import Figures, HashSpace, Level, Node
from extract.reconcile.turn import PairTurn
from extract.source.dialects.partition_sql import range_filter
from extract.source.jdbc import JdbcConnection
from extract.source.pool import SourcePool

T = TypeVar("T")


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
        where=hashes.source_within,
        ordered_key=hashes.source_ordered_key,
        origin=hashes.origin,
    )


#: Each key range is one query, which costs a few tens of milliseconds besides its rows. 10,000,000 rows
#: with nothing to find took 8.6 s in 32 ranges, 8.3 in 16 and 8.0 in 4. But the fewer the ranges, the
#: longer one connection may work alone when the keys are spread unevenly. So two ranges per query run
#: at once, each of at most this many rows (an answer of about 2,400 first-level ranges).
_RANGE_ROWS = 2_500_000


def source_ranges(
    context: RunContext, plan: TablePlan, hashes: RowHashes, bounds: KeyBounds | None, rows: int
) -> list[str]:
    """Key-range filters, one query each: equal spans of a whole-number key's [min, max] (nothing to sort),
    as many as a sync would cut `rows` rows into, or fewer (_RANGE_ROWS). [""] (one query) for a table of at most
    TIDEMARK_RECONCILE_DRIVER_ROWS rows (unless partitions of a fixed size are asked for), and for a key
    placed by a hash: its places spread over every key range, so each range's answer to a level would
    hold nearly all of the level's ranges (32 answers of 995,616 rows each at 1% of 10,000,000 rows),
    and a key the source does not store in its order was read whole by every range's query."""
    size = context.sizing.rows_per_partition(rows)
    small = context.sizing.fixed_rows is None and rows <= context.settings.reconcile.driver_rows
    if size is None or small or not hashes.source_ordered_key:
        return [""]
    assert bounds is not None and bounds.low is not None and bounds.high is not None, "placed by offset"
    low, high, count = int(bounds.low), int(bounds.high), max(1, -(-rows // size))
    if context.sizing.fixed_rows is None:  # partitions of a fixed size asked for are kept
        count = min(count, max(2 * context.settings.reconcile.source_queries, -(-rows // _RANGE_ROWS)))
    cuts = [(str(low + (high - low) * i // count),) for i in range(1, count)]
    ends: list[tuple[str, ...] | None] = [None, *cuts, None]
    return [range_filter(context.dialect, plan.source_keys[:1], "", start, end) for start, end in pairwise(ends)]


@dataclass
class SourceSide:
    context: RunContext
    side: HashedRelation
    space: HashSpace
    #: Key-range filters, one query each; [""]: the whole table in one query.
    ranges: Sequence[str]
    #: Connections in the JVM that matches the pairs (turn.py), where the pairs stay; the figures go
    #: through the context's.
    turns: SourcePool

    def level(self, level: Level) -> dict[int, Figures]:
        figures: dict[int, Figures] = {}
        if self.side.ordered_key and level.parents is not None:
            # Below the first level, a level's part is a slice of an ordered key: index reads of its pieces.
            pieces = _pieces(level.parents, self._queries_at_once)
            queries = [level_query(self.side, self.space, Level(level.depth, piece, level.whole)) for piece in pieces]
        else:
            queries = [level_query(self.side, self.space, level, within) for within in self.ranges]
        for row in self._read(queries):
            node, rows, checksum, null_keys = (exact_integer(v) for v in row)
            figures[node] = figures.get(node, Figures()) + Figures(rows, checksum, null_keys)
        return figures

    def pairs(self, leaves: Sequence[Node], turn: PairTurn) -> None:
        """The pairs of the ranges `leaves`, read into `turn`."""
        if self.side.ordered_key:  # the turn's slice of the key: index reads of its pieces
            pieces = _pieces(sorted(leaves, key=self._place), self._queries_at_once)
            queries = [pairs_query(self.side, self.space, piece) for piece in pieces]
        else:
            queries = [pairs_query(self.side, self.space, leaves, within) for within in self.ranges]
        for _ in self._each(queries, self.turns, lambda c, query: c.read_into(turn.sink, "source", query)):
            pass

    @property
    def _queries_at_once(self) -> int:
        return self.context.settings.reconcile.source_queries

    def _place(self, node: Node) -> int:
        return node.index * self.space.divisor(node.depth)

    def _read(self, queries: list[str]) -> Iterator[tuple[str | None, ...]]:
        """The rows of `queries`, one answer after another: a level's key ranges are summed as their answers
        come, never all held at once."""
        for rows in self._each(queries, self.context.sources, lambda connection, query: connection.query(query)):
            yield from rows

    def _each(self, queries: list[str], sources: SourcePool, ask: Callable[[JdbcConnection, str], T]) -> Iterator[T]:
        """`ask` each of `queries`, TIDEMARK_RECONCILE_SOURCE_QUERIES at a time, each on a connection of
        `sources`; the answers in the order of `queries`, each as soon as it and those before it came."""

        def one(query: str) -> T:
            try:
                return ask(sources.connection(), query)
            finally:
                sources.release()  # the next query, on whichever thread, takes the connection over

        if len(queries) == 1:
            yield one(queries[0])
            return
        workers = min(len(queries), self._queries_at_once)
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="source-range") as pool:
            yield from pool.map(one, queries)


def _pieces(items: Sequence[T], count: int) -> list[list[T]]:
    """`items` (in key order) cut into at most `count` consecutive pieces of about equal length."""
    size = max(1, -(-len(items) // count))
    return [list(items[i : i + size]) for i in range(0, len(items), size)]


def exact_integer(value: object) -> int:
    """A whole number as a source writes it: NULL (a sum of nothing) is 0, a decimal may carry a point."""
    if value is None:
        return 0
    try:
        return int(str(value))
    except ValueError:  # a database that writes its decimal(38, 0) with a point
        return int(Decimal(str(value)))
