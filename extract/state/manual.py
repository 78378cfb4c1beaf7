"""Changing the state registry by hand (`python -m extract state set|reset|rewind|import`).

A change is refused while a sync or reconcile of the table runs (it takes the table's extract lock),
while runs wait for a merge (the merge would commit over it), and when the registry moved past the
version the user read (compare-and-swap). Every change is audited with the role that made it.
"""

from __future__ import annotations

from dataclasses import dataclass

import psycopg
from psycopg.types.json import Jsonb

from extract.core.errors import TidemarkError
from extract.core.state_schema import StateSchema
from extract.state.registry import RegistryEntry, entry
from extract.state.run_log import try_extract_lock


@dataclass(frozen=True)
class Change:
    """The registry's new cursor value for one stream (None: the next run reads everything)."""

    table_key: str
    cursor_value: str | None
    reason: str
    #: The version the change was decided from; None: the one read under the lock.
    expect_version: int | None = None


def _refuse_busy(conn: psycopg.Connection, state: StateSchema, table_key: str, name: str) -> None:
    if not try_extract_lock(conn, state, table_key):
        raise TidemarkError(f"a sync or reconcile of {name} is running; change its state when it ends")
    row = conn.execute(
        state.sql("select string_agg(run_id::text, ', ' order by run_id) from {pending_runs} where table_key = %s"),
        (table_key,),
    ).fetchone()
    if row is not None and row[0]:
        raise TidemarkError(
            f"{name}: run(s) {row[0]} landed and wait for a merge, which would commit over a change made now: "
            "run dbt build first"
        )


def apply_change(
    conn: psycopg.Connection, state: StateSchema, change: Change, name: str
) -> tuple[RegistryEntry, RegistryEntry]:
    """Make `change` (one transaction, with its audit row); returns the entry before and after. The run
    that committed the state before stays named: the audit row says the change was made by hand."""
    try:
        _refuse_busy(conn, state, change.table_key, name)
        with conn.transaction():
            before = entry(conn, state, change.table_key, for_update=True)
            if before is None:
                raise TidemarkError(f"{name} has no committed state yet: sync it (and dbt build) first")
            if change.expect_version is not None and before.version != change.expect_version:
                raise TidemarkError(
                    f"{name}: the state is at version {before.version}, not {change.expect_version}: "
                    "a run committed meanwhile; look again (state show) and repeat the change"
                )
            conn.execute(
                state.sql(
                    "update {stream_state} set cursor_value = %s, version = version + 1,"
                    " updated_at = clock_timestamp() where table_key = %s and version = %s"
                ),
                (change.cursor_value, change.table_key, before.version),
            )
            if before.reader == "files" and change.cursor_value is None and state.has(conn, "file_checkpoint"):
                # A file source's checkpoint goes with its state: every file is new to the next run.
                conn.execute(state.sql("delete from {file_checkpoint} where table_key = %s"), (change.table_key,))
            after = entry(conn, state, change.table_key)
            assert after is not None
            _audit(conn, state, before, after, change.reason)
    finally:
        conn.execute("select pg_advisory_unlock_all()")
    return before, after


def import_entries(conn: psycopg.Connection, state: StateSchema, streams: list[RegistryEntry]) -> list[RegistryEntry]:
    """Streams' states from another target's export, all or none: refused when this target has state for
    one of them, or a sync of one runs or waits for a merge."""
    imported: list[RegistryEntry] = []
    try:
        for stream in streams:
            _refuse_busy(conn, state, stream.table_key, stream.table_key)
        with conn.transaction():
            for stream in streams:
                imported.append(_import_entry(conn, state, stream))
    finally:
        conn.execute("select pg_advisory_unlock_all()")
    return imported


def _import_entry(conn: psycopg.Connection, state: StateSchema, stream: RegistryEntry) -> RegistryEntry:
    if entry(conn, state, stream.table_key, for_update=True) is not None:
        raise TidemarkError(
            f"{stream.table_key} has state in this target already: import goes into a target without it"
        )
    conn.execute(
        state.sql(
            "insert into {stream_state}"
            " (table_key, reader, cursor_field, cursor_value, version, run_id, records_emitted)"
            " values (%s, %s, %s, %s, %s, null, %s)"
        ),
        (
            stream.table_key,
            stream.reader,
            stream.cursor_field,
            stream.cursor_value,
            stream.version + 1,
            stream.records_emitted,
        ),
    )
    after = entry(conn, state, stream.table_key)
    assert after is not None
    _audit(conn, state, None, after, f"imported at version {stream.version}")
    return after


def _audit(
    conn: psycopg.Connection, state: StateSchema, before: RegistryEntry | None, after: RegistryEntry, reason: str
) -> None:
    conn.execute(
        state.sql(
            "insert into {state_audit} (table_key, version, old_state, new_state, reason) values (%s, %s, %s, %s, %s)"
        ),
        (
            after.table_key,
            after.version,
            None if before is None else Jsonb(before.as_json()),
            Jsonb(after.as_json()),
            reason,
        ),
    )
