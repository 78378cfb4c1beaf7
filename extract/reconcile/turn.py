"""One turn of the key-by-key comparison, held in the JVM (tidemark.landing.PairDifferences): both sides'
pairs are read there, counted per range and matched; what comes back is each range's figures on both
sides and the pairs that differ, a few percent of them even at 1% differences."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from extract.reconcile.tree import Figures, HashSpace, Node

#: A pair as both sides return it: key text, key place, row hash, then the side's extra columns.
Pair = tuple[str | None, ...]


@dataclass(frozen=True)
class TurnOutcome:
    """By the turn's range numbers (their places in the turn's list of ranges)."""

    source: dict[int, Figures]
    replica: dict[int, Figures]
    #: (range, whether the replica holds the key, the source's pair) for each source pair the replica
    #: does not hold as it is, in the ranges' order.
    differ: list[tuple[int, bool, Pair]]
    #: (range, the replica's pair) for each replica key the source does not hold.
    replica_only: list[tuple[int, Pair]]
    #: Key places that fall in no range of the turn.
    outside: list[int]
    #: (side, range, key) for each key a side holds twice.
    duplicates: list[tuple[str, int, str]]


class PairTurn:
    """The ranges `leaves` of one turn, to be read by both sides (`sink` takes their queries' rows)."""

    def __init__(self, jvm: Any, leaves: Sequence[Node], space: HashSpace) -> None:
        ranges = ",".join(f"{space.divisor(node.depth)}:{node.index}" for node in leaves)
        self.sink = jvm.tidemark.landing.PairDifferences(ranges)

    def outcome(self) -> TurnOutcome:
        found = json.loads(self.sink.outcome())
        problems = [(str(kind), int(number), str(value)) for kind, number, value in found["problems"]]
        return TurnOutcome(
            source=_figures(found["source"]),
            replica=_figures(found["replica"]),
            differ=sorted(((int(r[0]), r[1] == 1, tuple(r[2:])) for r in found["differ"]), key=lambda d: d[0]),
            replica_only=sorted(((int(r[0]), tuple(r[1:])) for r in found["replicaOnly"]), key=_range_and_key),
            outside=[int(place) for kind, _, place in problems if kind == "outside"],
            duplicates=sorted(problem for problem in problems if problem[0] != "outside"),
        )


def _figures(rows: list[list[Any]]) -> dict[int, Figures]:
    return {int(number): Figures(int(count), int(checksum)) for number, count, checksum in rows}


def _range_and_key(entry: tuple[int, Pair]) -> tuple[int, str]:
    return entry[0], str(entry[1][0])
