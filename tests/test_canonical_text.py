"""A value's canonical text and a text's hashes have one definition, the state schema's functions
(extract/state/schema.sql): their bodies inlined, as both sides of a comparison write them, give what
calling the functions computes, value for value."""

from __future__ import annotations

from collections.abc import Iterator

import psycopg
import pytest

from extract.core.state_schema import StateSchema
from extract.project.verify import CANONICAL_KINDS
from extract.source.dialects import postgres_canonical as canonical
from extract.state.run_log import ensure_state_schema
from tests.conftest import Project

#: kind -> (a value of a type that takes that form, its length, its canonical text)
VALUES = {
    "int": ("cast(-42 as bigint)", None, "-42"),
    "decimal": ("cast(1.500 as numeric(6, 3))", None, "1.5"),
    "float": ("cast(0.1 as double precision)", None, "0.1"),
    "timestamp": ("timestamp '2024-02-29 23:59:59.123456'", None, "2024-02-29T23:59:59.123456"),
    "timestamptz": ("timestamptz '2024-02-29 23:59:59.5+05'", None, "2024-02-29T18:59:59.500000"),
    "date": ("date '2024-02-29'", None, "2024-02-29"),
    "time": ("time '00:00:00.000001'", None, "00:00:00.000001"),
    "bool": ("false", None, "false"),
    "bytes": ("cast('\\x00ff' as bytea)", None, "00ff"),
    "uuid": ("cast('A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11' as uuid)", None, "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"),
    "char": ("cast('ab' as char(4))", 4, "ab  "),
    "text": ("interval '1 day 02:00:00'", None, "1 day 02:00:00"),
}


def test_every_form_has_a_value_here() -> None:
    assert set(VALUES) == CANONICAL_KINDS


def _call(function: str, arguments: list[str]) -> str:
    """A call of the state schema's `function`."""
    return f"{StateSchema().function_text(function)}({', '.join(arguments)})"


@pytest.fixture
def target(project: Project) -> Iterator[psycopg.Connection]:
    with psycopg.connect(project.target_url, autocommit=True) as conn:
        ensure_state_schema(conn, StateSchema())
        yield conn


@pytest.mark.parametrize("kind", sorted(VALUES))
def test_the_inlined_form_writes_a_value_as_the_function_does(target: psycopg.Connection, kind: str) -> None:
    value, length, text = VALUES[kind]
    for given, expected in ((value, text), (f"(case when false then {value} end)", None)):
        inlined = canonical.canonical_text(given, kind, length)
        (name, _), arguments = canonical._form(given, kind, length)
        called = _call(name, arguments)
        assert target.execute(f"select {inlined}, {called}").fetchone() == (expected, expected)


def test_the_inlined_hashes_are_the_functions(target: psycopg.Connection) -> None:
    row = canonical.row_text(["'Zoë'", "null", "'1.5'"])
    hashes = [canonical.hash_bits(row, 64), canonical.hash_bits(row, 60)]
    called = [_call("tidemark_hash64", [row]), _call("tidemark_hash60", [row])]
    found = target.execute(f"select {', '.join(hashes + called)}, {row}").fetchone()
    assert found is not None
    assert found[:2] == found[2:4]
    assert found[4] == "Zoë\x1f\\N\x1f1.5"
    assert 0 <= found[1] < 2**60
