"""The one quoting function per language. Every name from a source catalog, a seed or the command
line reaches SQL, Jinja or a generated file through one of these, never by interpolation.

Executed Postgres statements are composed with psycopg's `sql.Identifier`, which quotes the same
way as `postgres_identifier`; the dbt macros use `tidemark_quote` (macros/shared/tidemark_quote.sql).
"""

from __future__ import annotations

import re

from psycopg import sql
from psycopg.abc import AdaptContext

#: Characters a Jinja string literal may hold as they are; every other one is written as an escape.
_JINJA_PLAIN = re.compile(r"[A-Za-z0-9_ .,:;()\-+*/=<>!?@&|^]")
#: What makes dbt render a string with Jinja (its own test is `({[{%#]|[#}%]})`), and what Jinja's
#: rendering would not give back as written: a newline at the end, a backslash, control characters.
_RENDERED = re.compile(r"[{}%#\\\x00-\x1f\x7f]")


def postgres_identifier(name: str) -> str:
    """A Postgres quoted identifier: any character taken literally, an embedded `"` doubled."""
    return '"' + name.replace('"', '""') + '"'


def tsql_identifier(name: str) -> str:
    """A T-SQL bracketed identifier: any character taken literally, an embedded `]` doubled."""
    return "[" + name.replace("]", "]]") + "]"


def sql_string(value: str) -> str:
    """A standard SQL string literal (Postgres with standard_conforming_strings, T-SQL): `'` doubled."""
    return "'" + value.replace("'", "''") + "'"


def _jinja_escape(char: str) -> str:
    if _JINJA_PLAIN.fullmatch(char):
        return char
    code = ord(char)
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def jinja_string(value: str) -> str:
    """A Jinja string literal that evaluates to exactly `value`: quotes, braces, backslashes and every
    other character outside a plain set are escapes (Jinja decodes string literals as Python does)."""
    return "'" + "".join(_jinja_escape(char) for char in value) + "'"


def dbt_text(value: str) -> str:
    """`value` as text for a field dbt renders with Jinja (YAML names, configs, test arguments,
    descriptions): the value itself when rendering leaves it as it is, else a Jinja expression
    of one string literal, which renders to exactly `value`."""
    if _RENDERED.search(value) is None and value == value.strip("\n"):
        return value
    return "{{ " + jinja_string(value) + " }}"


class ParameterSafeIdentifier(sql.Identifier):
    """psycopg's quoted identifier, for a statement executed with parameters: psycopg then reads every
    `%` of the statement as the start of a placeholder, names included, so a `%` in a name is doubled."""

    def as_bytes(self, context: AdaptContext | None = None) -> bytes:
        return super().as_bytes(context).replace(b"%", b"%%")
