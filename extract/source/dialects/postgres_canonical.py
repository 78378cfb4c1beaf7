"""A value's canonical text and a text's hashes in PostgreSQL, as SQL expressions, from their one
definition: the functions of the state schema (extract/state/schema.sql, end).

Their bodies are inlined, on the source (which has no such schema) and on the target alike, which
also spares a call per row. So the source's side and the replica's side of every comparison
(verify, quality checks, reconcile) write a value alike.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from importlib import resources

from extract.core.state_schema import SCHEMA_PLACEHOLDER
from extract.source.dialects.base import joined_text

_FUNCTION = re.compile(
    rf"create or replace function \{{{SCHEMA_PLACEHOLDER}\}}\.(?P<name>\w+)\((?P<parameters>[^)]*)\)"
    r"[^$]*?\$\$\s*select\s+(?P<body>.*?)\s*\$\$;",
    re.S,
)
_QUOTED = re.compile(r"('(?:[^']|'')*')")


def _functions(schema_sql: str) -> dict[tuple[str, str], tuple[list[str], str]]:
    """(name, type of the first parameter) -> (parameter names, body) of each SQL function."""
    found = {}
    for match in _FUNCTION.finditer(schema_sql):
        parameters = [p.split() for p in match.group("parameters").split(",") if p.strip()]
        first_type = " ".join(parameters[0][1:]) if parameters else ""
        found[(match.group("name"), first_type)] = ([p[0] for p in parameters], match.group("body"))
    return found


_DEFINED = _functions(resources.files("extract").joinpath("state", "schema.sql").read_text())

#: Canonical form (extract/project/verify.py, kind_of) -> its function and the type it takes.
_FORMS = {
    "int": ("tidemark_int_text", "bigint"),
    "decimal": ("tidemark_decimal_text", "numeric"),
    "float": ("tidemark_float_text", "double precision"),
    "timestamp": ("tidemark_stamp_text", "timestamp"),
    "timestamptz": ("tidemark_stamp_text", "timestamptz"),
    "date": ("tidemark_date_text", "date"),
    "time": ("tidemark_time_text", "time"),
    "bool": ("tidemark_bool_text", "boolean"),
    "bytes": ("tidemark_bytes_text", "bytea"),
    "uuid": ("tidemark_uuid_text", "uuid"),
    "char": ("tidemark_char_text", "bpchar"),
}
_ANY_FORM = ("tidemark_any_text", "anyelement")


def _inline(function: tuple[str, str], arguments: Sequence[str]) -> str:
    """The body of `function` with its parameters replaced by `arguments` (outside string literals)."""
    names, body = _DEFINED[function]
    by_name = dict(zip(names, arguments, strict=True))
    pattern = re.compile(r"\b(" + "|".join(names) + r")\b")
    parts = _QUOTED.split(body)  # odd parts are the literals
    return "".join(p if i % 2 else pattern.sub(lambda m: by_name[m.group(1)], p) for i, p in enumerate(parts))


def _form(quoted: str, kind: str, length: int | None) -> tuple[tuple[str, str], list[str]]:
    function = _FORMS.get(kind, _ANY_FORM)
    return function, [quoted, str(length or 1)] if kind == "char" else [quoted]


def canonical_text(quoted: str, kind: str, length: int | None) -> str:
    """The canonical text of `kind` of the column `quoted`, NULL when it is NULL, needing nothing of the
    state schema. `length` is a char(n) column's n."""
    return _inline(*_form(quoted, kind, length))


def plain_text(quoted: str) -> str:
    """The column `quoted` as PostgreSQL prints it: where both sides print a value alike, no conversion."""
    return f"cast({quoted} as text)"


def numeric_scale(target_type: str) -> int | None:
    """The scale of a numeric type's text: numeric(p, s) s, numeric(p) 0, numeric None; -1 for any other."""
    modifiers = re.fullmatch(r"\s*numeric\s*(\(\s*\d+\s*(?:,\s*(\d+)\s*)?\))?\s*", target_type.lower())
    if modifiers is None:
        return -1
    return None if modifiers.group(1) is None else int(modifiers.group(2) or 0)


def row_text(expressions: Sequence[str]) -> str:
    """The texts joined with U+001F, NULL written as \\N: what a row's hash is taken of."""
    return joined_text("chr(31)", expressions)


def hash_bits(text: str, bits: int) -> str:
    """The md5 of `text` as a bigint: bits=64, its first 64 bits, signed; bits=60, the 60 after the
    first four, never negative. Inlined: needs nothing of the state schema."""
    return _inline((f"tidemark_hash{bits}", "text"), [text])
