"""The state registry (the state schema's stream_state): per stream, the state its merges committed.

A merge writes it, in its own transaction, through the trigger on merge_log (extract/state/schema.sql);
`tidemark state` reads it and changes it by hand (extract/state/manual.py). Every change is in
the schema's state_audit.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

import psycopg

from extract.core.state_schema import StateSchema
from extract.state.contract import StreamState

_COLUMNS = "table_key, reader, cursor_field, cursor_value, version, run_id, records_emitted, updated_at"


@dataclass(frozen=True)
class RegistryEntry:
    table_key: str
    reader: str
    cursor_field: str | None
    cursor_value: str | None
    version: int
    run_id: int | None
    records_emitted: int | None
    updated_at: datetime

    @property
    def state(self) -> StreamState:
        return StreamState(self.table_key, self.cursor_field, self.cursor_value, reader=self.reader)

    def as_json(self) -> dict[str, Any]:
        return {
            "stream_id": self.table_key,
            "reader": self.reader,
            "cursor_field": self.cursor_field,
            "cursor_value": self.cursor_value,
            "version": self.version,
            "run_id": self.run_id,
            "records_emitted": self.records_emitted,
            "updated_at": self.updated_at.isoformat(),
        }


def entry(
    conn: psycopg.Connection, state: StateSchema, table_key: str, *, for_update: bool = False
) -> RegistryEntry | None:
    lock = " for update" if for_update else ""
    row = conn.execute(
        state.sql(f"select {_COLUMNS} from {{stream_state}} where table_key = %s{lock}"), (table_key,)
    ).fetchone()
    return None if row is None else RegistryEntry(*row)


def entries(conn: psycopg.Connection, state: StateSchema) -> list[RegistryEntry]:
    rows = conn.execute(state.sql(f"select {_COLUMNS} from {{stream_state}} order by table_key")).fetchall()
    return [RegistryEntry(*row) for row in rows]


def committed_state(conn: psycopg.Connection, state: StateSchema, table_key: str) -> StreamState | None:
    """The stream's input state for its next run: None when nothing was committed yet."""
    found = entry(conn, state, table_key)
    conn.commit()
    return None if found is None else found.state
