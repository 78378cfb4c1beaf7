"""Type names from type_map.csv, checked by the target's own parser before any DDL uses them.

`to_regtype(text)` parses its argument as exactly one type name (Postgres wraps it as
`select null::<text>` and refuses any other parse tree), bound as a parameter: a value that is
not a single, existing type is refused, and one that passes is safe to write into a CREATE TABLE.
"""

from __future__ import annotations

import threading

import psycopg

from extract.config.urls import DatabaseUrl


class TargetTypes:
    """Checks type names against the target; each distinct name is asked once per process."""

    def __init__(self, target: DatabaseUrl) -> None:
        self._target = target
        self._answers: dict[str, str | None] = {}
        self._lock = threading.Lock()
        self._conn: psycopg.Connection | None = None

    def problem(self, type_name: str) -> str | None:
        """None when the target takes `type_name` as a type, else why it does not."""
        with self._lock:
            if type_name not in self._answers:
                self._answers[type_name] = self._ask(type_name)
            return self._answers[type_name]

    def _ask(self, type_name: str) -> str | None:
        if self._conn is None:
            self._conn = psycopg.connect(self._target.libpq_url, autocommit=True)
        try:
            row = self._conn.execute("select to_regtype(%s)", (type_name,)).fetchone()
        except (psycopg.DataError, psycopg.ProgrammingError) as exc:  # varchar(0); not a type name at all
            return f"the target refuses it: {exc.diag.message_primary or exc}"
        if row is None or row[0] is None:
            return f"{self._target.display} has no such type"
        return None

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None
