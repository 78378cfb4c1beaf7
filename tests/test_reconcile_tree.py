"""The bisection's bookkeeping, without a database: ranges, the first depth, and the range cache."""

from __future__ import annotations

import random

import pytest

from extract.config.reconcile_settings import reconcile_settings
from extract.core.errors import TidemarkError
from extract.reconcile.compare import turns
from extract.reconcile.tree import HASH_BITS, Bisection, Figures, HashSpace, Level, Node


def _figures(hashes: dict[int, int], space: HashSpace, level: Level) -> dict[int, Figures]:
    """What a side answers for `level`: its rows (key hash -> row hash) summed per range, the parents'
    last children left out."""
    found: dict[int, Figures] = {}
    for key_hash, row_hash in hashes.items():
        node = key_hash // space.divisor(level.depth)
        outside = level.parents is not None and key_hash // space.divisor(level.depth - 1) not in level.parents
        if outside or (level.parents is not None and node % space.factor == space.factor - 1):
            continue
        found[node] = found.get(node, Figures()) + Figures(1, row_hash)
    return found


def _bisect(
    source: dict[int, int], replica: dict[int, int], factor: int, leaf_rows: int, bits: int = HASH_BITS
) -> tuple[set[int], Bisection]:
    """Run the bisection as a reconcile does; returns the key places inside the leaves it would compare."""
    space = HashSpace.of(factor, bits)
    bisection = Bisection(space, leaf_rows)
    level = Level(space.first_depth(max(len(source), len(replica)), leaf_rows), None)
    leaves: list[Node] = []
    while True:
        nodes = bisection.record(level, _figures(source, space, level), _figures(replica, space, level))
        found, larger = bisection.split(nodes)
        leaves += found
        if not larger:
            break
        level = Level(level.depth + 1, [n.index for n in larger])
    covered = {h for h in set(source) | set(replica) for n in leaves if h // space.divisor(n.depth) == n.index}
    return covered, bisection


@pytest.mark.parametrize("factor", [2, 32, 1024])
@pytest.mark.parametrize("differences", [0, 1, 50, 3000])
def test_every_difference_lands_in_a_compared_range(factor: int, differences: int) -> None:
    rng = random.Random(factor * 7919 + differences)
    source = {rng.getrandbits(HASH_BITS): rng.getrandbits(63) for _ in range(20_000)}
    replica = dict(source)
    keys = list(source)
    for i in range(differences):
        kind = i % 3
        if kind == 0:
            del replica[keys[i]]  # a row only in the source
        elif kind == 1:
            replica[keys[i]] += 1  # a row that differs
        else:
            replica[rng.getrandbits(HASH_BITS)] = 5  # a row only in the replica
    differing = {h for h in set(source) | set(replica) if source.get(h) != replica.get(h)}
    covered, bisection = _bisect(source, replica, factor, leaf_rows=64)
    assert differing <= covered
    assert (differences == 0) == (covered == set())
    if differences and bisection.queries > 1:
        assert bisection.derived > 0  # the range cache answered for some ranges


@pytest.mark.parametrize("bits", [1, 7, 24, 33])
def test_whole_number_keys_are_bisected_by_their_offsets(bits: int) -> None:
    """Offsets from the lowest key fill [0, span], not the whole space: dense neighbours, and a space of
    a few bits, are bisected down to their differences too."""
    rng = random.Random(bits)
    span = (1 << bits) - 1
    source = {rng.randint(0, span): rng.getrandbits(63) for _ in range(min(5_000, span + 1))}
    replica = dict(source)
    for key in rng.sample(sorted(source), min(20, len(source))):
        replica[key] += 1
    covered, _ = _bisect(source, replica, 32, leaf_rows=16, bits=bits)
    assert {k for k in source if source[k] != replica[k]} <= covered


def test_a_space_is_a_whole_number_of_levels() -> None:
    assert HashSpace.of(32, 24) == HashSpace(32, 25)
    assert HashSpace.of(32, 0).bits == 5 and HashSpace.of(32, 0).max_depth == 1
    assert HashSpace.of(4, 60) == HashSpace(4)
    assert HashSpace(32, 25).divisor(5) == 1 and HashSpace(32, 25).divisor(1) == 1 << 20


def test_derived_figures_equal_queried_ones() -> None:
    space = HashSpace(4)
    rng = random.Random(3)
    rows = {rng.getrandbits(HASH_BITS): rng.getrandbits(63) for _ in range(1000)}
    bisection = Bisection(space, 1)
    bisection.record(Level(1, None), _figures(rows, space, Level(1, None)), {})
    bisection.record(Level(2, [0, 1, 2, 3]), _figures(rows, space, Level(2, [0, 1, 2, 3])), {})
    everything = _figures(rows, space, Level(2, None))
    for index in (3, 7, 11, 15):  # each parent's last child: derived, never queried
        assert bisection.source[Node(2, index)] == everything.get(index, Figures())


def test_first_depth_grows_with_the_table() -> None:
    space = HashSpace(32)
    assert space.first_depth(1_000, 256) == 1
    assert space.first_depth(10_000_000, 256) == 3  # 32,768 ranges of about 305 rows
    assert space.first_depth(2**62, 1) == space.max_depth  # never deeper than the hash has bits


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("TIDEMARK_RECONCILE_FACTOR", "3"),
        ("TIDEMARK_RECONCILE_FACTOR", "2048"),
        ("TIDEMARK_RECONCILE_LEAF_ROWS", "0"),
        ("TIDEMARK_RECONCILE_MAX_DELETE_SHARE", "150%"),
        ("TIDEMARK_RECONCILE_MAX_DELETE_SHARE", "some"),
        ("TIDEMARK_RECONCILE_DRIVER_ROWS", "-5"),
        ("TIDEMARK_RECONCILE_PAIRS_ROWS", "999"),
        ("TIDEMARK_RECONCILE_SOURCE_QUERIES", "0"),
    ],
)
def test_bad_settings_name_the_value(name: str, value: str) -> None:
    with pytest.raises(TidemarkError, match=name) as raised:
        reconcile_settings({name: value})
    assert repr(value) in str(raised.value)


def test_settings_defaults() -> None:
    settings = reconcile_settings({})
    assert (settings.factor, settings.leaf_rows, settings.max_delete_share) == (32, 256, 0.1)
    assert settings.driver_rows == 2_000_000 and settings.source_queries == 2
    assert settings.pairs_rows == 100_000


def test_pairs_are_fetched_in_turns_within_the_budget() -> None:
    space = HashSpace(32)
    bisection = Bisection(space, 256)
    sizes = [300, 400, 500, 1200, 100]
    leaves = [Node(1, i) for i in range(len(sizes))]
    for node, size in zip(leaves, sizes, strict=True):
        bisection.source[node] = Figures(size, 0)
        bisection.replica[node] = Figures(size // 2, 0)
    groups = turns(leaves, bisection, 1000)
    assert [[n.index for n in group] for group in groups] == [[0, 1], [2], [3], [4]]  # a larger range alone
    assert sorted(n for group in groups for n in group) == leaves
