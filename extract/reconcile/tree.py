"""Range bisection over the space of key places, with a cache of every range's figures.

A row's key place is its key hash (60 bits), or, for a whole-number key, its offset from the
source's lowest key (extract/reconcile/hashes.py). The space [0, 2^bits) of key places is a tree:
a range at depth d is one of factor^d equal parts, numbered from 0, and splits into `factor`
ranges at depth d+1. Both databases give each range a count of rows and the sum of their row
hashes; ranges whose figures differ are split again, until a range holds at most `leaf_rows`
rows on each side, and then its (key, row hash) pairs are compared.

The first level is as deep as the table's size makes useful: with rows spread evenly, the
levels above it would each differ wherever a difference is, and each would cost the source
one more read. Below it, the cache (the seed's RangeCache) saves one range per split: the
last child of a parent is the parent's figures less its siblings', never queried.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

#: Bits of a key hash: the space reconcile bisects when the key is not a whole number.
HASH_BITS = 60


@dataclass(frozen=True, slots=True)
class Figures:
    rows: int = 0
    checksum: int = 0
    null_keys: int = 0

    def __sub__(self, other: Figures) -> Figures:
        return Figures(self.rows - other.rows, self.checksum - other.checksum, self.null_keys - other.null_keys)

    def __add__(self, other: Figures) -> Figures:
        return Figures(self.rows + other.rows, self.checksum + other.checksum, self.null_keys + other.null_keys)


EMPTY = Figures()


def differing(source: dict[int, Figures], replica: dict[int, Figures]) -> tuple[int, list[int]]:
    """Of two sides' figures by range (empty ranges left out): how many ranges either side holds, and
    those whose figures differ, in order."""
    indexes = source.keys() | replica.keys()
    return len(indexes), sorted(i for i in indexes if source.get(i, EMPTY) != replica.get(i, EMPTY))


@dataclass(frozen=True, order=True, slots=True)
class Node:
    depth: int
    index: int


@dataclass(frozen=True)
class HashSpace:
    factor: int  # a power of two, at least 2
    #: Key places lie in [0, 2^bits); a whole number of levels (`of` rounds up).
    bits: int = HASH_BITS

    @classmethod
    def of(cls, factor: int, bits: int) -> HashSpace:
        """The space of `bits`-bit key places, widened to a whole number of levels (at least one)."""
        level_bits = factor.bit_length() - 1
        return cls(factor, max(level_bits, -(-bits // level_bits) * level_bits))

    @property
    def level_bits(self) -> int:
        return self.factor.bit_length() - 1

    @property
    def max_depth(self) -> int:
        return self.bits // self.level_bits

    def divisor(self, depth: int) -> int:
        """key place // divisor(d) is the index of the place's range at depth d."""
        return 1 << max(0, self.bits - self.level_bits * depth)

    def first_depth(self, rows: int, leaf_rows: int) -> int:
        """The shallowest depth whose ranges hold at most leaf_rows * factor rows each (on average)."""
        depth = 1
        while depth < self.max_depth and rows > leaf_rows * self.factor ** (depth + 1):
            depth += 1
        return depth


@dataclass
class Level:
    """What one level asks of both sides: the ranges at `depth` under `parents` (None: every range),
    leaving out the last child of each parent, which the cache derives. A `whole` level asks every
    child of its parents, consecutive ones whose figures were never asked (extract/reconcile/density.py)."""

    depth: int
    parents: list[int] | None
    whole: bool = False


class Bisection:
    """The figures of both sides per range, and what the next level or the pair comparison needs."""

    def __init__(self, space: HashSpace, leaf_rows: int) -> None:
        self.space = space
        self.leaf_rows = leaf_rows
        self.source: dict[Node, Figures] = {}
        self.replica: dict[Node, Figures] = {}
        self.queries = 0  # levels asked of each side
        self.derived = 0  # ranges whose figures came from the cache
        self.ranges = 0  # ranges compared
        self.replica_rows = 0  # the replica's rows in the first level's ranges (or a dense start's)
        self._depths: set[int] = set()

    def record(self, level: Level, source: dict[int, Figures], replica: dict[int, Figures]) -> list[Node]:
        """Store a level's answers (index -> figures, empty ranges left out) and derive each parent's last
        child; returns the ranges that differ, the only ones whose figures are kept (and read later). A
        level under parents may come in parts."""
        self.queries += level.depth not in self._depths
        self._depths.add(level.depth)
        if level.parents is None or level.whole:
            self.replica_rows += sum(figures.rows for figures in replica.values())
            ranges, differ = differing(source, replica)
            self.ranges += ranges
            return [self._keep(Node(level.depth, i), source.get(i, EMPTY), replica.get(i, EMPTY)) for i in differ]
        # Per parent, in plain integers: a part of a level holds tens of thousands of ranges.
        factor, depth = self.space.factor, level.depth
        nodes = []
        for parent in level.parents:
            above = Node(depth - 1, parent)
            first = parent * factor
            source_last, replica_last = self.source[above], self.replica[above]
            for index in range(first, first + factor - 1):
                theirs, mine = source.get(index, EMPTY), replica.get(index, EMPTY)
                source_last, replica_last = source_last - theirs, replica_last - mine
                if theirs != mine:
                    nodes.append(self._keep(Node(depth, index), theirs, mine))
            if source_last != replica_last:
                nodes.append(self._keep(Node(depth, first + factor - 1), source_last, replica_last))
        self.ranges += factor * len(level.parents)
        self.derived += len(level.parents)
        return nodes

    def _keep(self, node: Node, source: Figures, replica: Figures) -> Node:
        self.source[node], self.replica[node] = source, replica
        return node

    def settle(self, level: Level) -> None:
        """Forget the figures of `level`'s parents, once it is recorded: with the ranges that agree never
        kept, what stays grows with the differences, not with the table."""
        if not level.whole:
            self.forget(Node(level.depth - 1, parent) for parent in level.parents or ())

    def forget(self, nodes: Iterable[Node]) -> None:
        for node in nodes:
            del self.source[node], self.replica[node]

    def split(self, nodes: Iterable[Node]) -> tuple[list[Node], list[Node]]:
        """Of the ranges that differ (as `record` returns them): those to compare pair by pair, and those to
        split further."""
        leaves: list[Node] = []
        larger: list[Node] = []
        for node in nodes:
            small = max(self.source[node].rows, self.replica[node].rows) <= self.leaf_rows
            (leaves if small or node.depth >= self.space.max_depth else larger).append(node)
        return leaves, larger
