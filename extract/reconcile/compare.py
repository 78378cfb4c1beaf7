"""Bisect until the differing ranges are small, asking both sides each level at once; a part of a level
has the pairs of its small differing ranges compared as soon as it has found them."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import partial
from typing import Any, TypeVar

from extract.core.errors import LogicalError
from extract.core.observer import Note, Observer
from extract.reconcile import density
from extract.reconcile.replica_side import ReplicaSide
from extract.reconcile.source_side import SourceSide
from extract.reconcile.tree import Bisection, Level, Node
from extract.reconcile.turn import PairTurn, TurnOutcome

T = TypeVar("T")
U = TypeVar("U")


#: The most ranges a part of a level asks of each side (an ordered key's levels come in parts).
PART_RANGES = 16_384

#: Handed each turn of the pair comparison: its ranges, and what the matching of its pairs found.
PairsHandler = Callable[[list[Node], TurnOutcome], None]


def _both(pool: ThreadPoolExecutor, left: Callable[[], T], right: Callable[[], U]) -> tuple[T, U]:
    """Run both sides' queries at once: each database works on its own."""
    right_future = pool.submit(right)
    return left(), right_future.result()


def turns(leaves: list[Node], bisection: Bisection, budget: int) -> list[list[Node]]:
    """The differing ranges in groups of at most `budget` rows on either side (a larger range alone), in
    the order of the key places: each group is a slice of the key-place space."""
    space = bisection.space
    groups: list[list[Node]] = []
    current: list[Node] = []
    rows = 0
    for node in sorted(leaves, key=lambda n: n.index * space.divisor(n.depth)):
        size = max(bisection.source[node].rows, bisection.replica[node].rows)
        if current and rows + size > budget:
            groups.append(current)
            current, rows = [], 0
        current.append(node)
        rows += size
    return [*groups, current] if current else groups


@dataclass
class Comparer:
    """Both sides of one table's comparison, the bisection's figures, and whom to tell the progress."""

    source: SourceSide
    replica: ReplicaSide
    bisection: Bisection
    say: Observer
    table: str
    #: The JVM that matches each turn's pairs.
    jvm: Any
    #: With places by offset, the source's highest key's place (None: places by hash).
    last_place: int | None = None

    def compare(self, first_depth: int, pairs_rows: int, on_pairs: PairsHandler) -> int:
        """Bisect; hand the pairs of the differing small ranges to `on_pairs`, at most `pairs_rows` rows at a
        time, as soon as a part of a level has found them: what the driver holds at once is a part's, not a
        level's. Returns the source rows with a NULL in a key column."""
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="replica") as pool:
            parts = self._first_parts(pool, first_depth)
            null_keys = 0
            while parts:
                ranges, differ, compared, larger = 0, 0, 0, []
                for level in parts:
                    count, small, deeper, nulls = self._level(pool, level)
                    null_keys += nulls
                    ranges += count
                    differ += len(small) + len(deeper)
                    compared += len(small)
                    larger += deeper
                    self._pairs(pool, small, pairs_rows, on_pairs)
                self._note(
                    f"depth {parts[0].depth}: {ranges:,} ranges, {differ:,} differ ({compared:,} compared key by key)"
                )
                parts = self._next_level(parts[0].depth + 1, larger)
        return null_keys

    def _first_parts(self, pool: ThreadPoolExecutor, first_depth: int) -> list[Level]:
        """The first level; or, where the windows sampled show dense differences, every range one level
        deeper, in parts."""
        space, last_place = self.bisection.space, self.last_place
        # Keys placed by hash have no slices: each would read the whole table.
        if last_place is None or not (windows := density.sample_levels(space, first_depth, last_place)):
            return [Level(first_depth, None)]
        answers = [_both(pool, partial(self.source.level, w), partial(self.replica.level, w)) for w in windows]
        differ, ranges = density.differing(answers)
        if not density.is_dense(differ, ranges):
            return [Level(first_depth, None)]
        parts = density.dense_parts(space, first_depth, last_place, PART_RANGES)
        self._note(
            f"{differ:,} of {ranges:,} ranges sampled differ: compared from depth {first_depth + 1} on, "
            f"in {len(parts):,} slices of the key"
        )
        return parts

    def _pairs(self, pool: ThreadPoolExecutor, leaves: list[Node], pairs_rows: int, on_pairs: PairsHandler) -> None:
        """The pairs of the ranges `leaves`, in turns of at most `pairs_rows` rows a side, each read into the
        JVM, matched there and handed to `on_pairs`; then the turn's ranges are forgotten."""
        groups = turns(leaves, self.bisection, pairs_rows)
        for number, group in enumerate(groups, start=1):
            if len(groups) > 1:
                self._note(f"pairs of {len(group):,} differing ranges, turn {number} of {len(groups)}")
            turn = PairTurn(self.jvm, group, self.bisection.space)
            _both(pool, partial(self.source.pairs, group, turn), partial(self.replica.pairs, group, turn))
            on_pairs(group, turn.outcome())
            self.bisection.forget(group)  # classified: no later step reads these ranges' figures

    def _note(self, text: str) -> None:
        self.say(Note(self.table, text))

    def _level(self, pool: ThreadPoolExecutor, level: Level) -> tuple[int, list[Node], list[Node], int]:
        """One level (or part of one) asked of both sides: how many ranges, those to compare key by key,
        those to split, and the source rows with a NULL key (counted at the first level)."""
        bisection = self.bisection
        source_figures, replica_figures = _both(
            pool, partial(self.source.level, level), partial(self.replica.level, level)
        )
        first = level.parents is None or level.whole
        null_keys = sum(f.null_keys for f in source_figures.values()) if first else 0
        counted = bisection.ranges
        nodes = bisection.record(level, source_figures, replica_figures)
        negative = [n for n in nodes if bisection.replica[n].rows < 0]
        if negative:
            raise LogicalError(f"range cache: the replica's range {negative[0]} has a negative row count")
        found, larger = bisection.split(nodes)
        bisection.settle(level)
        return bisection.ranges - counted, found, larger, null_keys

    def _next_level(self, depth: int, larger: list[Node]) -> list[Level]:
        """The next level under the ranges `larger`; with an ordered key, in parts of at most
        PART_RANGES ranges, each a slice of the key: what the driver holds at once does not grow with
        the table. A hashed key is asked in one part, as every part would read the whole table."""
        parents = sorted(n.index for n in larger)
        if not self.source.side.ordered_key:
            return [Level(depth, parents)] if parents else []
        size = max(1, PART_RANGES // self.bisection.space.factor)
        return [Level(depth, parents[i : i + size]) for i in range(0, len(parents), size)]
