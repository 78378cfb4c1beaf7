"""Bisect until the differing ranges are small, asking both sides each level at once; then fetch their pairs."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import partial
from typing import TypeVar

from extract.core.errors import LogicalError
from extract.core.observer import Observer
from extract.reconcile.classify import Pair
from extract.reconcile.replica_side import ReplicaSide
from extract.reconcile.source_side import SourceSide
from extract.reconcile.tree import Bisection, Level, Node

T = TypeVar("T")
U = TypeVar("U")


@dataclass
class Comparison:
    leaves: list[Node]
    source_pairs: list[Pair]
    replica_pairs: list[Pair]
    null_keys: int  # source rows with a NULL in a key column (first level)


def _both(pool: ThreadPoolExecutor, left: Callable[[], T], right: Callable[[], U]) -> tuple[T, U]:
    """Run both sides' queries at once: each database works on its own."""
    right_future = pool.submit(right)
    return left(), right_future.result()


def compare(
    source: SourceSide, replica: ReplicaSide, bisection: Bisection, first_depth: int, say: Observer, table: str
) -> Comparison:
    leaves: list[Node] = []
    level = Level(first_depth, None)
    null_keys = 0
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="replica") as pool:
        while True:
            source_figures, replica_figures = _both(pool, partial(source.level, level), partial(replica.level, level))
            if level.parents is None:
                null_keys = sum(f.null_keys for f in source_figures.values())
            nodes = bisection.record(level, source_figures, replica_figures)
            negative = [n for n in nodes if bisection.replica[n].rows < 0]
            if negative:
                raise LogicalError(f"range cache: the replica's range {negative[0]} has a negative row count")
            found, larger = bisection.split(nodes)
            leaves += found
            differing = len(found) + len(larger)
            say(
                "note",
                {
                    "table": table,
                    "run": None,
                    "text": f"depth {level.depth}: {len(nodes):,} ranges, "
                    f"{differing:,} differ ({len(found):,} to compare key by key)",
                },
            )
            if not larger:
                break
            level = Level(level.depth + 1, [n.index for n in larger])
        if not leaves:
            return Comparison([], [], [], null_keys)
        source_pairs, replica_pairs = _both(pool, lambda: source.pairs(leaves), lambda: replica.pairs(leaves))
    return Comparison(leaves, source_pairs, replica_pairs, null_keys)
