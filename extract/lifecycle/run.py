"""The lifecycle every run goes through, whatever reads the table (extract/readers):

1. take the table's lock (one run of a kind per table at a time; refused while another holds it);
2. let the reader prepare the landing tables under it;
3. begin: go on with the killed run the reader resumes, else record a new run from the stream's
   input state (a killed run not resumed is failed);
4. the reader reads: plans partitions and lands them through ActiveRun (checkpoints, retries), then
   checks the batch;
5. end 'landed' with the output state, in the transaction that takes the merge's lock; or, on any
   error, 'failed' with the error's first line, and what the run landed dropped.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TypeVar

import psycopg

from extract.config.settings import Settings
from extract.core.errors import TidemarkError, first_line
from extract.core.observer import Failed, Landed, Observer, RunBegan
from extract.core.state_schema import StateSchema
from extract.lifecycle.active_run import ActiveRun
from extract.lifecycle.context import RunContext
from extract.lifecycle.reader import Reader
from extract.state.protection import check_state_key, ensure_protection
from extract.state.run_log import (
    RunRecord,
    ensure_state_schema,
    merge_lock_sql,
    next_run_id,
    release_extract_lock,
    try_extract_lock,
)
from extract.state.snapshot_log import SnapshotRecord

R = TypeVar("R", RunRecord, SnapshotRecord)

#: How a run that read nothing to merge ends (a reconcile that found the replica exact, or a dry run).
ENDED_WITHOUT_MERGE = ("exact", "reported")


def run_stream(context: RunContext, reader: Reader[R], observer: Observer) -> R:
    """One run of `reader`'s table, start to end; returns its record as it ended. Raises what failed it."""
    state = context.settings.state_schema
    with context.targets.connection(autocommit=False) as conn:
        ensure_state_schema(conn, state)
        ensure_protection(conn, state, context.settings.state_key)
        if not try_extract_lock(conn, state, reader.lock.key):
            raise TidemarkError(reader.lock.busy)
        try:
            record = _run(conn, context, reader, observer)
        finally:
            release_extract_lock(conn, state, reader.lock.key)
    if record.status == "landed":
        observer(Landed(reader.table, record))
    return record


def _run(conn: psycopg.Connection, context: RunContext, reader: Reader[R], observer: Observer) -> R:
    state = context.settings.state_schema
    conn.commit()
    reader.prepare(conn)
    record, resumed = _begin(conn, state, reader)
    observer(RunBegan(reader.table, record, resumed, context.settings.safety_window))
    try:
        reader.read(ActiveRun(conn, record, resumed, context, reader.journal, observer, reader.table, reader.clear))
        _end(conn, state, reader, record)
    except Exception as exc:
        conn.rollback()
        record.status, record.error_message, record.output_state = "failed", first_line(exc), None
        record.ended_at = datetime.now(UTC)
        reader.journal.end(conn, record)
        reader.discard(conn, record)
        observer(Failed(reader.table, record))
        raise
    return record


def check_target_state(settings: Settings) -> None:
    """Before a pass writes anything: the state key, if any, can protect the target's state schema, and a
    protected schema's key is given (extract/state/protection.py)."""
    with psycopg.connect(settings.target.libpq_url) as conn:
        check_state_key(conn, settings.state_schema, settings.state_key)


def _begin(conn: psycopg.Connection, state: StateSchema, reader: Reader[R]) -> tuple[R, bool]:
    input_state = reader.input_state(conn)
    killed = reader.journal.interrupted(conn, reader.table_key)
    if killed is not None:
        resumed = reader.resume(conn, killed, input_state)
        if resumed is not None:
            return resumed, True
    record = reader.new_run(conn, next_run_id(conn, state), input_state)
    record.input_state = None if input_state is None else input_state.as_json()
    conn.commit()
    if killed is not None:
        reader.journal.abandon(conn, killed, record.run_id)
    reader.clear(conn, (0, []))  # what failed and killed runs left
    reader.journal.begin(conn, record)
    return record, False


def _end(conn: psycopg.Connection, state: StateSchema, reader: Reader[R], record: R) -> None:
    if record.status not in ENDED_WITHOUT_MERGE:
        record.status = "landed"
    output = reader.output_state(conn, record)
    record.output_state = None if output is None else output.as_json()
    record.ended_at = datetime.now(UTC)
    conn.commit()
    with conn.transaction():
        if isinstance(record, RunRecord):
            # The merge's lock before staging's, in the order the merge takes them.
            conn.execute(*merge_lock_sql(state, reader.table_key))
        # The end first: a commit that merges (a full refresh) commits the registry from the landed run.
        reader.journal.end(conn, record)
        if record.status == "landed":
            reader.commit(conn, record)
