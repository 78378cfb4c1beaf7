"""One turn of the key-by-key comparison, held in the JVM (tidemark.landing.PairDifferences): both sides'
pairs are read there, counted per range and matched; what comes back is each range's figures on both
sides, then the pairs that differ, a few thousand at a time: a turn of new keys differs whole."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from extract.reconcile.tree import Figures, HashSpace, Node

#: A pair as both sides return it: key text, key place, row hash, then the side's extra columns.
Pair = tuple[str | None, ...]

#: The most pairs that differ the driver takes from the JVM at once.
DIFFERENCES_AT_ONCE = 5_000


@dataclass(frozen=True)
class Differences:
    """Some of a turn's pairs that differ, by the turn's range numbers, in the ranges' order."""

    #: (range, whether the replica holds the key, the source's pair) for each source pair the replica
    #: does not hold as it is.
    differ: list[tuple[int, bool, Pair]]
    #: (range, the replica's pair) for each replica key the source does not hold, by key within a range.
    replica_only: list[tuple[int, Pair]]


@dataclass(frozen=True)
class TurnOutcome:
    """By the turn's range numbers (their places in the turn's list of ranges)."""

    source: dict[int, Figures]
    replica: dict[int, Figures]
    #: Key places that fall in no range of the turn.
    outside: list[int]
    #: (side, range, key) for each key a side holds twice.
    duplicates: list[tuple[str, int, str]]
    #: The pairs that differ, taken from the JVM as they are read: every source pair before the
    #: replica's own.
    differences: Iterator[Differences]


class PairTurn:
    """The ranges `leaves` of one turn, to be read by both sides (`sink` takes their queries' rows)."""

    def __init__(self, jvm: Any, leaves: Sequence[Node], space: HashSpace) -> None:
        ranges = ",".join(f"{space.divisor(node.depth)}:{node.index}" for node in leaves)
        self.sink = jvm.tidemark.landing.PairDifferences(ranges)

    def outcome(self) -> TurnOutcome:
        """Once both sides are read."""
        found = json.loads(self.sink.figures())
        problems = [(str(kind), int(number), str(value)) for kind, number, value in found["problems"]]
        return TurnOutcome(
            source=_figures(found["source"]),
            replica=_figures(found["replica"]),
            outside=[int(place) for kind, _, place in problems if kind == "outside"],
            duplicates=sorted(problem for problem in problems if problem[0] != "outside"),
            differences=self._differences(),
        )

    def _differences(self) -> Iterator[Differences]:
        while True:
            found = json.loads(self.sink.differences(DIFFERENCES_AT_ONCE))
            if not found["differ"] and not found["replicaOnly"]:
                return
            yield Differences(
                differ=[(int(r[0]), r[1] == 1, tuple(r[2:])) for r in found["differ"]],
                replica_only=[(int(r[0]), tuple(r[1:])) for r in found["replicaOnly"]],
            )


def _figures(rows: list[list[Any]]) -> dict[int, Figures]:
    return {int(number): Figures(int(count), int(checksum)) for number, count, checksum in rows}
