"""The registry as `state` shows it and moves it: stream names, the audit trail, runs' states, JSON files."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Any

import psycopg

from extract.core.errors import TidemarkError
from extract.core.state_schema import StateSchema
from extract.state.registry import RegistryEntry

#: The export's format, checked on import.
EXPORT_FORMAT = "tidemark state 1"


def resolve_stream(conn: psycopg.Connection, state: StateSchema, name: str, named_key: str | None) -> str:
    """The table key of `name`: a replica's (schema.table), or a source table's (SCHEMA.TABLE, any case),
    as its runs recorded it or as `named_key` (the replica the project's settings name for it) is."""
    row = conn.execute(
        state.sql(
            "select table_key from {stream_state} where table_key = %s or table_key = %s"
            " union all (select distinct table_key from {run_log}"
            " where lower(source_schema || '.' || source_table) = lower(%s))"
        ),
        (name, named_key, name),
    ).fetchall()
    keys = sorted({str(r[0]) for r in row})
    if not keys:
        raise TidemarkError(f"unknown table {name!r}: no state and no run of it in this target (see state list)")
    if len(keys) > 1:
        raise TidemarkError(f"table {name!r} is ambiguous: it names {', '.join(keys)}; give the replica's name")
    return keys[0]


def audit_rows(conn: psycopg.Connection, state: StateSchema, table_key: str) -> list[dict[str, Any]]:
    rows = conn.execute(
        state.sql(
            "select version, old_state ->> 'cursor_value', new_state ->> 'cursor_value', reason, run_id, changed_by,"
            " changed_at from {state_audit} where table_key = %s order by audit_id"
        ),
        (table_key,),
    ).fetchall()
    names = ("version", "old_cursor", "new_cursor", "reason", "run_id", "changed_by", "changed_at")
    return [dict(zip(names, (*r[:6], r[6].isoformat()), strict=True)) for r in rows]


def latest_states(conn: psycopg.Connection, state: StateSchema, table_key: str) -> dict[str, Any]:
    """The input and output state of the stream's latest run (seed 001's contract)."""
    row = conn.execute(
        state.sql(
            "select run_id, status, input_state, output_state from {runs} where table_key = %s"
            " order by run_id desc limit 1"
        ),
        (table_key,),
    ).fetchone()
    if row is None:
        return {}
    return {"latest_run": {"run_id": row[0], "status": row[1], "input_state": row[2], "output_state": row[3]}}


def write_export(streams: list[RegistryEntry], output: Path | None) -> int:
    text = json.dumps({"format": EXPORT_FORMAT, "streams": [s.as_json() for s in streams]}, indent=2) + "\n"
    if output is None:
        print(text, end="")
    else:
        output.write_text(text)
    return 0


def read_export(file: Path) -> list[RegistryEntry]:
    try:
        data = json.loads(file.read_text())
    except (OSError, ValueError) as exc:
        raise TidemarkError(f"{file}: not a state export ({exc})") from None
    if not isinstance(data, dict) or data.get("format") != EXPORT_FORMAT or not isinstance(data.get("streams"), list):
        raise TidemarkError(f"{file}: not a state export (format {EXPORT_FORMAT!r} with a list of streams)")
    try:
        return [_entry(stream) for stream in data["streams"]]
    except (KeyError, TypeError, ValueError) as exc:
        raise TidemarkError(f"{file}: a stream of the export is incomplete ({exc!r})") from None


def _entry(stream: dict[str, Any]) -> RegistryEntry:
    def text(name: str) -> str | None:
        value = stream.get(name)
        return None if value is None else str(value)

    emitted = stream.get("records_emitted")
    return RegistryEntry(
        table_key=str(stream["stream_id"]),
        reader=str(stream["reader"]),
        cursor_field=text("cursor_field"),
        cursor_value=text("cursor_value"),
        version=int(stream["version"]),
        run_id=None,
        records_emitted=None if emitted is None else int(emitted),
        updated_at=datetime.fromisoformat(str(stream["updated_at"])),
    )
