"""Seeded random changes a watermark cannot see, across every table of a sample in the stand-in
source: hard deletes, updates that leave the cursor where it was, primary keys changed (cursor
bumped) and whole keys swapped between two rows (cursor left)."""

from __future__ import annotations

import math
import random
from collections import Counter
from collections.abc import Sequence

import psycopg
from psycopg import sql

from extract.devtools.sample import SampleTable
from tests.aw_changes import CURSOR, INT_TYPES, NOW, TEXT_TYPES, _ident, _key_match, _keys, _new_code, _text_column

Key = tuple[object, ...]
#: The share of each table's rows a round deletes.
DELETED_SHARE = 0.02


def _changeable(sample: SampleTable) -> str | None:
    """The key column whose value a key change picks anew: an integer, else a text column."""
    by_name = {c.name: c for c in sample.table.columns}
    key = sample.table.primary_key
    return next((k for k in key if by_name[k].base_type in INT_TYPES), None) or next(
        (k for k in key if by_name[k].base_type in TEXT_TYPES), None
    )


class KeyMaker:
    """Keys no row of the table holds, for one column of the key."""

    def __init__(self, sample: SampleTable, keys: Sequence[Key], rng: random.Random) -> None:
        self.sample, self.rng = sample, rng
        self.column = _changeable(sample)
        self.position = -1 if self.column is None else sample.table.primary_key.index(self.column)
        self.taken = {str(k[self.position]) for k in keys}
        self.top = max((int(str(k[self.position])) for k in keys), default=0) if self._is_int() else 0

    def _is_int(self) -> bool:
        by_name = {c.name: c for c in self.sample.table.columns}
        return self.column is not None and by_name[self.column].base_type in INT_TYPES

    def fresh(self, key: Key) -> Key:
        """`key` with its changeable column set to a value no row holds."""
        if self._is_int():
            self.top += 1
            value: object = self.top
        else:
            column = next(c for c in self.sample.table.columns if c.name == self.column)
            value = _new_code(self.rng, column.length or 3, self.taken)
        return tuple(value if i == self.position else part for i, part in enumerate(key))


def _set_key(conn: psycopg.Connection, sample: SampleTable, old: Key, new: Key, bump: bool) -> int:
    key = sample.table.primary_key
    sets = [sql.SQL("{} = %s").format(sql.Identifier(k)) for k in key]
    if bump:
        sets.append(sql.SQL("{} = {}").format(sql.Identifier(CURSOR), NOW))
    statement = sql.SQL("update {} set {} where {}").format(
        _ident(sample.table.schema, sample.table.name), sql.SQL(", ").join(sets), _key_match(key)
    )
    return conn.execute(statement, [*new, *old]).rowcount


def _swap(conn: psycopg.Connection, sample: SampleTable, a: Key, b: Key, maker: KeyMaker) -> int:
    """Row a takes b's key and b takes a's, through a free key (the source checks its key row by row)."""
    parked = maker.fresh(a)
    done = _set_key(conn, sample, a, parked, False)
    done += _set_key(conn, sample, b, a, False)
    _set_key(conn, sample, parked, b, False)
    return done


def _backdate(conn: psycopg.Connection, sample: SampleTable, keys: Sequence[Key], tag: str) -> int:
    text = _text_column(sample)
    if text is None:
        return 0
    limit = 4000 if text.length in (None, -1) else text.length
    statement = sql.SQL("update {} set {} = left(%s || coalesce({}, ''), %s) where {}").format(
        _ident(sample.table.schema, sample.table.name),
        sql.Identifier(text.name),
        sql.Identifier(text.name),
        _key_match(sample.table.primary_key),
    )
    return sum(conn.execute(statement, [tag, limit, *key]).rowcount for key in keys)


def _delete(conn: psycopg.Connection, sample: SampleTable, keys: Sequence[Key]) -> int:
    statement = sql.SQL("delete from {} where {}").format(
        _ident(sample.table.schema, sample.table.name), _key_match(sample.table.primary_key)
    )
    return sum(conn.execute(statement, list(key)).rowcount for key in keys)


def apply_hard_round(
    conn: psycopg.Connection, samples: Sequence[SampleTable], seed: int, with_record_id: set[str]
) -> dict[str, Counter[str]]:
    """One round over every table with at least six rows; returns, per table, how many of each kind
    were made, key changes and swapped rows counted apart for tables with a record id (`with_record_id`).
    It deletes 2% of each table's rows (one at least), as a reconcile's default guard lets go."""
    rng = random.Random(seed)
    made: dict[str, Counter[str]] = {}
    for sample in samples:
        keys = _keys(conn, sample)
        if len(keys) < 6:
            continue
        picked = rng.sample(keys, 6)
        table = made.setdefault(sample.table.qualified, Counter())
        table["backdated"] += _backdate(conn, sample, picked[:2], f"b{seed}")
        chosen = set(picked)
        others = rng.sample([k for k in keys if k not in chosen], math.ceil(len(keys) * DELETED_SHARE) - 1)
        table["deleted"] += _delete(conn, sample, [picked[2], *others])
        maker = KeyMaker(sample, keys, rng)
        if maker.column is None:
            continue
        kind = " (record_id)" if sample.table.qualified in with_record_id else ""
        table["key changed" + kind] += _set_key(conn, sample, picked[3], maker.fresh(picked[3]), True)
        table["keys swapped" + kind] += _swap(conn, sample, picked[4], picked[5], maker)
    return made
