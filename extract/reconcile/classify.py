"""Key by key, what a reconcile repairs: the pairs of the differing ranges that do not match, classified
(the JVM matched them, extract/reconcile/turn.py).

A key only in the source, or in both with different row hashes, is re-read and landed as an
upsert; a key only in the replica becomes a tombstone; a key whose source cursor is recent is
left to the sync, which reads it anyway. The pairs of each range must add up to the range's
figures: on the replica's side anything else is a LOGICAL ERROR (the bisection lost rows); on
the source's side it means the source changed meanwhile, and that range waits for the next run.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

from extract.core.errors import KEY_PLACE, KeyValueRefused, LogicalError
from extract.reconcile.tree import EMPTY, Bisection, Figures, Node
from extract.reconcile.turn import Pair, TurnOutcome

SAMPLE_SIZE = 5


@dataclass
class Repairs:
    """What a comparison found, counted; the keys themselves go to the target turn by turn (TurnRepairs,
    extract/reconcile/repair_keys.py)."""

    inserted: int = 0
    changed: int = 0
    deleted: int = 0
    left_to_sync: int = 0
    #: Ranges skipped because the source changed while they were compared.
    unsettled: int = 0
    samples: dict[str, list[str]] = field(default_factory=dict)

    @property
    def upserted(self) -> int:
        return self.inserted + self.changed

    def sample(self, kind: str, key: str) -> None:
        keys = self.samples.setdefault(kind, [])
        if len(keys) < SAMPLE_SIZE:
            keys.append(key)


@dataclass
class TurnRepairs:
    """Keys a turn repairs (some of them: a turn's keys come a few thousand at a time)."""

    #: (key text, the source's positions that re-read it, the source's row hash when compared) of each key
    #: to re-read: the re-check compares that hash with what lands.
    upserts: list[tuple[str, tuple[str, ...], str]] = field(default_factory=list)
    #: The replica's key values (text) of each key to delete.
    tombstones: list[tuple[str, ...]] = field(default_factory=list)


def classify(
    outcome: TurnOutcome, leaves: Sequence[Node], bisection: Bisection, recent: bool, repairs: Repairs
) -> Iterator[TurnRepairs]:
    """The keys to repair in the ranges `leaves` (a turn's, in its order), a few thousand at a time as the
    JVM gives them, counted into `repairs`; `recent`: the source's last extra column says 'recent'/'old'."""
    settled = _settled(outcome, leaves, bisection, repairs)
    for differences in outcome.differences:
        found = TurnRepairs()
        for number, held, pair in differences.differ:
            if number in settled:
                _classify_source_pair(pair, held, recent, repairs, found)
        for number, pair in differences.replica_only:
            if number in settled:
                found.tombstones.append(tuple(str(v) for v in pair[3:]))
                repairs.deleted += 1
                repairs.sample("deleted", str(pair[0]))
        yield found


def _settled(outcome: TurnOutcome, leaves: Sequence[Node], bisection: Bisection, repairs: Repairs) -> set[int]:
    """The turn's range numbers whose pairs add up to their figures on both sides: the others' source
    changed while they were compared (counted as unsettled)."""
    if outcome.outside:
        raise LogicalError(f"bisection completeness: a pair at key place {outcome.outside[0]} is in no range compared")
    settled = set()
    for number, node in enumerate(leaves):
        mine = outcome.replica.get(number, EMPTY)
        if mine != _counted(bisection.replica[node]):
            raise LogicalError(
                f"bisection completeness: the replica's rows of range {node.depth}/{node.index} do not add up "
                f"to its figures ({mine} against {bisection.replica[node]})"
            )
        if outcome.source.get(number, EMPTY) != _counted(bisection.source[node]):
            repairs.unsettled += 1  # the source changed while it was compared: the next run sees it
            continue
        settled.add(number)
    for side, number, key in outcome.duplicates:  # "replica" sorts after "source"
        if number in settled:
            raise KeyValueRefused(
                f"the {side} holds {KEY_PLACE} more than once; the source does not enforce it", repr(key)
            )
    return settled


def _counted(figures: Figures) -> Figures:
    """The figures pairs can be checked against: rows and checksum."""
    return Figures(figures.rows, figures.checksum)


def _classify_source_pair(pair: Pair, held: bool, recent: bool, repairs: Repairs, found: TurnRepairs) -> None:
    """A source pair the replica does not hold as it is: re-read, unless the sync reads it anyway."""
    if recent and pair[-1] == "recent":
        repairs.left_to_sync += 1
        return
    key = str(pair[0])
    found.upserts.append((key, tuple(str(v) for v in (pair[3:-1] if recent else pair[3:])), str(pair[2])))
    if held:
        repairs.changed += 1
        repairs.sample("updated", key)
    else:
        repairs.inserted += 1
        repairs.sample("inserted", key)


@dataclass
class Classifier:
    """Classifies the pairs of each turn of a comparison, counting them, and hands their keys to `keep` a few
    thousand at a time: the driver holds no more keys than that, beyond a few samples."""

    bisection: Bisection
    recent: bool
    keep: Callable[[TurnRepairs], None]
    repairs: Repairs = field(default_factory=Repairs)

    def __call__(self, leaves: list[Node], outcome: TurnOutcome) -> None:
        for found in classify(outcome, leaves, self.bisection, self.recent, self.repairs):
            self.keep(found)
