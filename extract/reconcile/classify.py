"""Key by key, what a reconcile repairs: the pairs of the differing ranges, classified.

A key only in the source, or in both with different row hashes, is re-read and landed as an
upsert; a key only in the replica becomes a tombstone; a key whose source cursor is recent is
left to the sync, which reads it anyway. The pairs of each range must add up to the range's
figures: on the replica's side anything else is a LOGICAL ERROR (the bisection lost rows); on
the source's side it means the source changed meanwhile, and that range waits for the next run.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from extract.core.errors import KEY_PLACE, KeyValueRefused, LogicalError
from extract.reconcile.tree import Bisection, Figures, Node

#: Pairs as both sides return them: key text, key hash, row hash, then the side's extra columns.
Pair = tuple[str | None, ...]
SAMPLE_SIZE = 5


@dataclass
class Repairs:
    #: Source positions of each key to re-read, by key text.
    upserts: dict[str, tuple[str, ...]] = field(default_factory=dict)
    inserted: int = 0
    changed: int = 0
    #: Replica key values (text) of each key to delete, by key text.
    tombstones: dict[str, tuple[str, ...]] = field(default_factory=dict)
    left_to_sync: int = 0
    #: Ranges skipped because the source changed while they were compared.
    unsettled: int = 0
    samples: dict[str, list[str]] = field(default_factory=dict)

    def sample(self, kind: str, key: str) -> None:
        keys = self.samples.setdefault(kind, [])
        if len(keys) < SAMPLE_SIZE:
            keys.append(key)

    def absorb(self, other: Repairs) -> None:
        """Add the repairs of other ranges (compared in another turn)."""
        self.upserts.update(other.upserts)
        self.tombstones.update(other.tombstones)
        self.inserted += other.inserted
        self.changed += other.changed
        self.left_to_sync += other.left_to_sync
        self.unsettled += other.unsettled
        for kind, keys in other.samples.items():
            for key in keys:
                self.sample(kind, key)


def _by_leaf(pairs: Sequence[Pair], leaves: Sequence[Node], bisection: Bisection) -> dict[Node, list[Pair]]:
    # Millions of pairs at 1% differences: per pair, integer lookups only.
    by_depth: dict[int, dict[int, list[Pair]]] = {}
    grouped: dict[Node, list[Pair]] = {}
    for node in leaves:
        grouped[node] = by_depth.setdefault(node.depth, {})[node.index] = []
    divisors = [(bisection.space.divisor(depth), ranges) for depth, ranges in sorted(by_depth.items())]
    for pair in pairs:
        place = int(pair[1] or 0)
        for divisor, ranges in divisors:
            found = ranges.get(place // divisor)
            if found is not None:
                found.append(pair)
                break
        else:
            raise LogicalError(f"bisection completeness: a pair at key place {place} is in no range compared")
    return grouped


def _figures(pairs: Sequence[Pair]) -> Figures:
    return Figures(len(pairs), sum(int(p[2] or 0) for p in pairs))


def _keyed(pairs: Sequence[Pair], side: str) -> dict[str, Pair]:
    keyed: dict[str, Pair] = {}
    for pair in pairs:
        key = str(pair[0])
        if key in keyed:
            raise KeyValueRefused(
                f"the {side} holds {KEY_PLACE} more than once; the source does not enforce it", repr(key)
            )
        keyed[key] = pair
    return keyed


def classify(
    source: Sequence[Pair], replica: Sequence[Pair], leaves: Sequence[Node], bisection: Bisection, recent: bool
) -> Repairs:
    """The repairs of the ranges `leaves`; `recent`: the source's last extra column says 'recent'/'old'."""
    repairs = Repairs()
    source_leaves = _by_leaf(source, leaves, bisection)
    replica_leaves = _by_leaf(replica, leaves, bisection)
    for node in leaves:
        mine = replica_leaves[node]
        if _figures(mine) != _counted(bisection.replica[node]):
            raise LogicalError(
                f"bisection completeness: the replica's rows of range {node.depth}/{node.index} do not add up "
                f"to its figures ({_figures(mine)} against {bisection.replica[node]})"
            )
        theirs = source_leaves[node]
        if _figures(theirs) != _counted(bisection.source[node]):
            repairs.unsettled += 1
            continue
        _classify_leaf(_keyed(theirs, "source"), _keyed(mine, "replica"), recent, repairs)
    return repairs


def _counted(figures: Figures) -> Figures:
    """The figures pairs can be checked against: rows and checksum."""
    return Figures(figures.rows, figures.checksum)


def _classify_leaf(source: dict[str, Pair], replica: dict[str, Pair], recent: bool, repairs: Repairs) -> None:
    for key, pair in source.items():
        other = replica.get(key)
        if other is not None and other[2] == pair[2]:
            continue
        if recent and pair[-1] == "recent":
            repairs.left_to_sync += 1
            continue
        positions = tuple(str(v) for v in (pair[3:-1] if recent else pair[3:]))
        repairs.upserts[key] = positions
        if other is None:
            repairs.inserted += 1
            repairs.sample("inserted", key)
        else:
            repairs.changed += 1
            repairs.sample("updated", key)
    for key, pair in replica.items():
        if key not in source:
            repairs.tombstones[key] = tuple(str(v) for v in pair[3:])
            repairs.sample("deleted", key)


@dataclass
class Classifier:
    """Classifies the pairs of each turn of a comparison, keeping only what the repairs need: their
    keys, and the source's row hash of each key re-read (the re-check compares it with what lands)."""

    bisection: Bisection
    recent: bool
    repairs: Repairs = field(default_factory=Repairs)
    #: Key text -> the row hash the source's row had when compared, for each key re-read.
    compared: dict[str, str] = field(default_factory=dict)

    def __call__(self, leaves: list[Node], source: list[Pair], replica: list[Pair]) -> None:
        found = classify(source, replica, leaves, self.bisection, self.recent)
        self.repairs.absorb(found)
        self.compared.update((str(p[0]), str(p[2])) for p in source if str(p[0]) in found.upserts)
