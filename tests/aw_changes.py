"""Seeded random changes across every table of a sample loaded into the stand-in source.

Per table and round: inserts (a copied row under a new key and a new rowguid), updates that bump
ModifiedDate, updates that stamp a row with the table's committed watermark
exactly, and rows whose cursor is NULL.
"""

from __future__ import annotations

import random
import string
from collections import Counter
from collections.abc import Sequence

import psycopg
from psycopg import sql

from extract.devtools.sample import SampleTable
from extract.source.catalog import SourceColumn

CURSOR = "ModifiedDate"
RECORD_ID = "rowguid"
NOW = sql.SQL("clock_timestamp() at time zone 'UTC'")
INT_TYPES = {"int", "smallint", "tinyint", "bigint"}
TEXT_TYPES = {"nvarchar", "varchar", "nchar", "char"}
#: What an inserted copy of a row takes anew: its cursor, and its record id (unique, like a key).
FRESH = {CURSOR: NOW, RECORD_ID: sql.SQL("gen_random_uuid()")}


def _ident(*names: str) -> sql.Composed:
    return sql.SQL(".").join(map(sql.Identifier, names))


def _key_match(key: Sequence[str]) -> sql.Composed:
    return sql.SQL(" and ").join(sql.SQL("{} = %s").format(sql.Identifier(k)) for k in key)


def _text_column(sample: SampleTable) -> SourceColumn | None:
    """A column whose value we can change without breaking a key: text, three characters or more."""
    for col in sample.table.columns:
        if col.name in sample.table.primary_key or col.base_type not in TEXT_TYPES:
            continue
        if col.length is not None and (col.length == -1 or col.length >= 3):
            return col
    return None


def make_cursor_nullable(conn: psycopg.Connection, samples: Sequence[SampleTable]) -> None:
    for sample in samples:
        conn.execute(
            sql.SQL("alter table {} alter column {} drop not null").format(
                _ident(sample.table.schema, sample.table.name), sql.Identifier(CURSOR)
            )
        )


def _keys(conn: psycopg.Connection, sample: SampleTable) -> list[tuple[object, ...]]:
    table = _ident(sample.table.schema, sample.table.name)
    key = sql.SQL(", ").join(map(sql.Identifier, sample.table.primary_key))
    return [tuple(r) for r in conn.execute(sql.SQL("select {} from {}").format(key, table)).fetchall()]


def _update(
    conn: psycopg.Connection, sample: SampleTable, keys: Sequence[tuple[object, ...]], stamp: sql.Composable, tag: str
) -> int:
    table = _ident(sample.table.schema, sample.table.name)
    text = _text_column(sample)
    sets = [sql.SQL("{} = {}").format(sql.Identifier(CURSOR), stamp)]
    params: list[object] = []
    if text is not None:
        limit = 4000 if text.length in (None, -1) else text.length
        sets.append(sql.SQL("{0} = left(%s || coalesce({0}, ''), %s)").format(sql.Identifier(text.name)))
        params += [tag, limit]
    statement = sql.SQL("update {} set {} where {}").format(
        table, sql.SQL(", ").join(sets), _key_match(sample.table.primary_key)
    )
    done = 0
    for key in keys:
        done += conn.execute(statement, [*params, *key]).rowcount
    return done


def _new_code(rng: random.Random, length: int, taken: set[str]) -> str:
    while True:
        code = "".join(rng.choice(string.ascii_uppercase) for _ in range(min(length, 3))).ljust(length)
        if code not in taken:
            taken.add(code)
            return code


def _insert(
    conn: psycopg.Connection, sample: SampleTable, rng: random.Random, keys: Sequence[tuple[object, ...]], count: int
) -> int:
    """Copies of existing rows under new keys: max+1 for an integer key column, a fresh code otherwise."""
    table = _ident(sample.table.schema, sample.table.name)
    key = sample.table.primary_key
    columns = sample.table.columns
    by_name = {c.name: c for c in columns}
    int_key = next((k for k in key if by_name[k].base_type in INT_TYPES), None)
    text_key = next((k for k in key if by_name[k].base_type in TEXT_TYPES), None)
    if int_key is None and text_key is None:
        return 0
    changed = int_key or text_key
    assert changed is not None
    taken = {str(k[key.index(changed)]) for k in keys}
    done = 0
    for number in range(count):
        source_key = rng.choice(keys)
        if int_key is not None:
            top = max(int(str(k[key.index(int_key)])) for k in keys)
            new_value: object = top + 1 + number
        else:
            new_value = _new_code(rng, by_name[changed].length or 3, taken)
        select = [sql.SQL("%s") if c.name == changed else FRESH.get(c.name, sql.Identifier(c.name)) for c in columns]
        statement = sql.SQL("insert into {} ({}) select {} from {} where {}").format(
            table,
            sql.SQL(", ").join(sql.Identifier(c.name) for c in columns),
            sql.SQL(", ").join(select),
            table,
            _key_match(key),
        )
        done += conn.execute(statement, [new_value, *source_key]).rowcount
    return done


def apply_round(
    conn: psycopg.Connection, samples: Sequence[SampleTable], watermarks: dict[str, str], seed: int
) -> Counter[str]:
    """One round of changes over every non-empty table; returns how many of each kind were made."""
    rng = random.Random(seed)
    made: Counter[str] = Counter()
    for sample in samples:
        keys = _keys(conn, sample)
        if not keys:
            continue
        picked = rng.sample(keys, min(len(keys), 6))
        made["updated"] += _update(conn, sample, picked[:3], NOW, f"r{seed}")
        watermark = watermarks.get(sample.table.qualified)
        if watermark is not None:
            exact = sql.SQL("cast({} as timestamp)").format(sql.Literal(watermark))
            made["stamped at the watermark"] += _update(conn, sample, picked[3:4], exact, f"w{seed}")
        made["set to a NULL cursor"] += _update(conn, sample, picked[4:5], sql.NULL, f"n{seed}")
        made["inserted"] += _insert(conn, sample, rng, keys, 2)
    return made
