"""The target's schema for tidemark's state (TIDEMARK_STATE_SCHEMA), defined once: its relations as SQL,
always through psycopg's `sql.Identifier`, and the keys of the advisory locks scoped to it.

Several tidemark projects (tenants) may share one target database, each with a state schema of its own,
owned by its role. Their advisory locks are keyed by the schema too, so two tenants syncing tables of the
same name do not wait on each other; the default schema's keys stay what they were before tenants.
"""

from __future__ import annotations

import string
from dataclasses import dataclass
from typing import Any

import psycopg
from psycopg import sql
from psycopg.rows import tuple_row

DEFAULT_STATE_SCHEMA = "_migration"
#: The placeholder a statement of the state schema writes for the schema itself (schema.sql's `{state}`).
SCHEMA_PLACEHOLDER = "state"
#: Between a lock's key and the schema it is scoped to.
LOCK_SCOPE_MARK = "@"


@dataclass(frozen=True)
class StateSchema:
    name: str = DEFAULT_STATE_SCHEMA

    @property
    def is_default(self) -> bool:
        return self.name == DEFAULT_STATE_SCHEMA

    @property
    def identifier(self) -> sql.Identifier:
        return sql.Identifier(self.name)

    def relation(self, name: str) -> sql.Identifier:
        """A table, view, sequence or function of the state schema, schema-qualified and quoted."""
        return sql.Identifier(self.name, name)

    def sql(self, template: str, **given: sql.Composable) -> sql.Composed:
        """`template` with `{state}` replaced by the schema, each `{name}` in `given` by its value, and each
        other `{name}` by the schema's relation `name` (a literal brace is written twice); `%s`
        placeholders stay for the statement's parameters."""
        fields = {field for _, field, _, _ in string.Formatter().parse(template) if field}
        names = {f: self.identifier if f == SCHEMA_PLACEHOLDER else self.relation(f) for f in fields - set(given)}
        return sql.SQL(template).format(**names, **given)

    def has(self, conn: psycopg.Connection[Any], name: str) -> bool:
        """Whether relation `name` of the schema exists (a command may run before the first sync)."""
        with conn.cursor(row_factory=tuple_row) as cursor:
            row = cursor.execute(
                "select to_regclass(%s) is not null", (self.relation(name).as_string(conn),)
            ).fetchone()
        return bool(row and row[0])

    def text(self, template: str) -> str:
        """`sql(template)` as text, for a statement another driver runs (JDBC)."""
        return self.sql(template).as_string()

    def function_text(self, name: str) -> str:
        """A function of the schema as a stored expression names it. The default schema's is written as it
        always was (unquoted), so that the expressions replicas keep, and their fingerprints, stay the same."""
        if self.is_default:
            return f"{DEFAULT_STATE_SCHEMA}.{name}"
        return self.relation(name).as_string()

    def lock_key(self, prefix: str, key: str = "") -> str:
        """The text an advisory lock's key is hashed from: `prefix` and `key` for the default schema (as
        before tenants); for another, `@` and the schema's name after them (macros: tidemark_lock_key)."""
        return prefix + key if self.is_default else f"{prefix}{key}{LOCK_SCOPE_MARK}{self.name}"
