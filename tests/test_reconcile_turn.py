"""One turn of the key-by-key comparison (extract/reconcile/turn.py): the JVM matches both sides' pairs and
hands the driver those that differ a few thousand at a time, in the ranges' order, however many differ
(a turn of new keys differs whole)."""

from __future__ import annotations

from extract.config.urls import parse_url
from extract.reconcile.tree import Figures, HashSpace, Node
from extract.reconcile.turn import DIFFERENCES_AT_ONCE, PairTurn
from extract.runtime.jars import jar_paths
from extract.runtime.source_jvm import SourceJvm
from extract.source.jdbc import JdbcConnection

SPACE = HashSpace.of(32, 20)
#: Places [0, 32768), [32768, 65536) and [65536, 66560): ranges 0, 1 and 2 of the turn.
LEAVES = [Node(1, 0), Node(1, 1), Node(2, 64)]
#: Keys ordered apart by code point and by UTF-16 unit (U+1D11E is a surrogate pair, below U+E000 in UTF-16).
AWKWARD_KEYS = ["\U0001d11e", "\ue000", "a", "Z"]


def _pairs(keys: str, row_hash: str) -> str:
    """Pairs (key text, place, row hash, the key again as the extra column) of the keys `keys` (SQL)."""
    return f"select cast(k as text), cast(k as text), {row_hash}, cast(k as text) from ({keys}) as keys(k)"


def test_a_turn_s_differences_come_a_few_thousand_at_a_time_in_the_ranges_order(pg_admin_url: str) -> None:
    jvm = SourceJvm(jar_paths())
    try:
        with JdbcConnection(jvm.jvm, parse_url(pg_admin_url)) as conn:
            turn = PairTurn(jvm.jvm, LEAVES, SPACE)
            conn.read_into(turn.sink, "source", _pairs("select generate_series(0, 11999)", "'1'"))
            # The replica holds the first 3,000 keys, every odd one changed, and 8,000 keys of range 1 the
            # source does not hold; and in range 2 keys only it holds, whose order depends on how it is read.
            conn.read_into(turn.sink, "replica", _pairs("select generate_series(0, 2999)", "cast(1 + k % 2 as text)"))
            conn.read_into(turn.sink, "replica", _pairs("select generate_series(40000, 47999)", "'1'"))
            awkward = ", ".join(f"('{key}', {65536 + i})" for i, key in enumerate(AWKWARD_KEYS))
            conn.read_into(
                turn.sink, "replica", f"select k, cast(p as text), '1', k from (values {awkward}) as a(k, p)"
            )
            outcome = turn.outcome()
            chunks = list(outcome.differences)
    finally:
        stopped = jvm.stop()
        assert stopped is not None and stopped.wait(timeout=60) == 0
    assert outcome.source == {0: Figures(12_000, 12_000)}
    assert outcome.replica == {0: Figures(3_000, 4_500), 1: Figures(8_000, 8_000), 2: Figures(4, 4)}
    assert (outcome.outside, outcome.duplicates) == ([], [])
    assert len(chunks) == -(-(10_500 + 8_004) // DIFFERENCES_AT_ONCE)
    assert all(len(c.differ) + len(c.replica_only) <= DIFFERENCES_AT_ONCE for c in chunks)
    differ = [entry for chunk in chunks for entry in chunk.differ]
    assert sorted((int(str(pair[0])), held) for _, held, pair in differ) == sorted(
        [(k, True) for k in range(1, 3000, 2)] + [(k, False) for k in range(3000, 12_000)]
    )
    assert all(number == 0 and pair[2] == "1" for number, _, pair in differ)
    replica_only = [entry for chunk in chunks for entry in chunk.replica_only]
    expected = [(1, str(k)) for k in range(40_000, 48_000)] + [(2, key) for key in AWKWARD_KEYS]
    assert [(number, pair[0]) for number, pair in replica_only] == sorted(expected)
