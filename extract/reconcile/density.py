"""Where differences are dense, skip the first level.

With differences spread through a table (1% of its rows, say), nearly every range of the first level
differs, and the level below it reads nearly every row again: both sides hash the table twice. So
before the first level, a few windows of it are compared (a parent each, one level up: `factor`
ranges), spread over the key. Where at least DENSE_SHARE of the ranges sampled differ, the comparison
starts one level deeper instead, in parts that are consecutive slices of the key, every range of them
asked: each row is hashed once, and what the driver holds at once is a part's.

Only a whole-number key (places by offset) is sampled: a slice of it is an index read. A table whose
first level is small is never sampled: its first level costs little, and the windows would be a large
share of it.
"""

from __future__ import annotations

from extract.reconcile import tree
from extract.reconcile.tree import Figures, HashSpace, Level

#: Windows sampled, spread evenly over the key.
WINDOWS = 4
#: A table is sampled only when its first level holds at least this many times the ranges sampled.
SAMPLED_SHARE_AT_MOST = 16
#: The share of the ranges sampled that must differ for the comparison to start deeper. Starting
#: deeper hashes each row once, but asks `factor` times as many ranges: it pays where a third of the
#: first level's ranges would be read again.
DENSE_SHARE = 1 / 3

#: Each side's figures (range index -> figures) of one window.
Answer = tuple[dict[int, Figures], dict[int, Figures]]


def sample_levels(space: HashSpace, first_depth: int, last_place: int) -> list[Level]:
    """The windows to sample before a first level at `first_depth`; none when the table is not sampled.
    `last_place`: the source's highest key's place."""
    if not 2 <= first_depth < space.max_depth:
        return []
    ranges = last_place // space.divisor(first_depth) + 1
    if ranges < SAMPLED_SHARE_AT_MOST * WINDOWS * space.factor:
        return []
    parents = last_place // space.divisor(first_depth - 1) + 1
    return [Level(first_depth, [parents * (2 * i + 1) // (2 * WINDOWS)], whole=True) for i in range(WINDOWS)]


def differing(answers: list[Answer]) -> tuple[int, int]:
    """Of the ranges the windows hold (on either side): how many differ, and how many there are."""
    counted = [tree.differing(source, replica) for source, replica in answers]
    return sum(len(differ) for _, differ in counted), sum(ranges for ranges, _ in counted)


def is_dense(differ: int, ranges: int) -> bool:
    return ranges > 0 and differ >= DENSE_SHARE * ranges


def dense_parts(space: HashSpace, first_depth: int, last_place: int, part_ranges: int) -> list[Level]:
    """Every range one level below `first_depth`, in parts of at most `part_ranges` ranges, each a slice
    of the key; the last runs to the end of the space, so that no range is left out."""
    block = max(1, part_ranges // space.factor)
    end = space.factor**first_depth  # the ranges at first_depth
    last_parent = min(last_place // space.divisor(first_depth), end - 1)
    starts = list(range(0, last_parent + 1, block))
    ends = [*starts[1:], end]
    return [
        Level(first_depth + 1, list(range(start, stop)), whole=True) for start, stop in zip(starts, ends, strict=True)
    ]
