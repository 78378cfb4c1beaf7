"""The run log in the target's state schema (extract/core/state_schema.py): append-only, one row per run event."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import datetime
from importlib import resources

import psycopg
from psycopg import sql
from psycopg.types.json import Jsonb

from extract.core.sql_contract import EXTRACT_LOCK_PREFIX, MERGE_LOCK_PREFIX
from extract.core.state_schema import StateSchema

#: The DDL lock's key: serialises DDL between extracts running at once (CREATE ... IF NOT EXISTS races on the
#: catalog). The state schema's DDL takes it scoped to the schema (ddl_lock_sql); the replicas' DDL, short
#: and rare, takes it as it is, for every project on the target.
DDL_LOCK_KEY = "tidemark:ddl"
DDL_LOCK = f"select pg_advisory_xact_lock(hashtext('{DDL_LOCK_KEY}'))"

#: The state schema's DDL; `{state}` is the schema, `{state_name}` its name as a string (schema_sql()).
SCHEMA_SQL = resources.files("extract.state").joinpath("schema.sql").read_text()
#: Marks a state schema created from this SCHEMA_SQL, so that a run skips the DDL when nothing changed.
SCHEMA_VERSION = "tidemark state " + hashlib.sha256(SCHEMA_SQL.encode()).hexdigest()[:16]


def ddl_lock_sql(state: StateSchema) -> tuple[str, tuple[str]]:
    """The lock that serialises DDL of `state`'s project."""
    return "select pg_advisory_xact_lock(hashtext(%s))", (state.lock_key(DDL_LOCK_KEY),)


def schema_sql(state: StateSchema) -> sql.Composed:
    """SCHEMA_SQL for `state`: every name of the schema quoted by sql.Identifier."""
    return sql.SQL(SCHEMA_SQL).format(state=state.identifier, state_name=sql.Literal(state.name))


@dataclass
class RunRecord:
    run_id: int
    table_key: str
    source_schema: str
    source_table: str
    target_schema: str
    target_table: str
    migration_type: str
    cursor_column: str | None
    watermark_used: str | None
    started_at: datetime
    status: str = "running"
    watermark_candidate: str | None = None
    source_filter: str | None = None
    rows_landed: int | None = None
    partition_positions: str | None = None
    partitions_planned: int | None = None
    partitions_landed: int | None = None
    rows_planned: int | None = None
    landed_by: str | None = None
    error_message: str | None = None
    ended_at: datetime | None = None
    #: Seed 001's contract (extract/state/contract.py): the state the run read from, and, once it
    #: landed, the state its merge commits.
    input_state: dict[str, object] | None = None
    output_state: dict[str, object] | None = None
    #: A --full-refresh run: its rows replace the replica (they land apart from staging).
    replaces_replica: bool | None = None
    #: The table's plan as the run read it (TablePlan.fingerprint).
    plan_fingerprint: str | None = None
    #: Why the run's merge moves the state where it does, beside the run itself (the audit says it).
    state_reason: str | None = None


def ensure_state_schema(conn: psycopg.Connection, state: StateSchema) -> None:
    """Create or upgrade the state schema, unless it is the one SCHEMA_SQL defines already (its comment)."""
    with conn.transaction():
        row = conn.execute("select obj_description(to_regnamespace(%s), 'pg_namespace')", (state.name,)).fetchone()
        if row is not None and row[0] == SCHEMA_VERSION:
            return
        conn.execute(*ddl_lock_sql(state))
        conn.execute(schema_sql(state))
        conn.execute(sql.SQL("comment on schema {} is {}").format(state.identifier, sql.Literal(SCHEMA_VERSION)))


def committed_watermark(conn: psycopg.Connection, state: StateSchema, table_key: str) -> str | None:
    query = state.sql("select watermark from {committed_watermarks} where table_key = %s")
    row = conn.execute(query, (table_key,)).fetchone()
    return None if row is None else row[0]


def next_run_id(conn: psycopg.Connection, state: StateSchema) -> int:
    row = conn.execute("select nextval(%s)", (state.relation("run_id_seq").as_string(conn),)).fetchone()
    assert row is not None
    return int(row[0])


def merge_lock_sql(state: StateSchema, table_key: str) -> tuple[str, tuple[str]]:
    """The lock that the merge also takes (see macros/bookkeeping/tidemark_merge_lock.sql)."""
    return "select pg_advisory_xact_lock(hashtext(%s))", (state.lock_key(MERGE_LOCK_PREFIX, table_key),)


def append_event(conn: psycopg.Connection, state: StateSchema, run: RunRecord) -> None:
    """Append the run's current state; a 'landed' event is serialised with merges of the table."""
    columns = list(vars(run))
    statement = sql.SQL("insert into {} ({}) values ({})").format(
        state.relation("run_log"),
        sql.SQL(", ").join(map(sql.Identifier, columns)),
        sql.SQL(", ").join(_stored(state, column, sql.Placeholder()) for column in columns),
    )
    with conn.transaction():
        if run.status == "landed":
            conn.execute(*merge_lock_sql(state, run.table_key))
        conn.execute(statement, [_value(getattr(run, c)) for c in columns])


#: The run log's columns that hold key values (where the landed prefix of the partition plan ends).
KEY_VALUE_COLUMNS = frozenset({"partition_positions"})


def _stored(state: StateSchema, column: str, value: sql.Composable) -> sql.Composable:
    """`value` as the run log stores it in `column`: a key value through tidemark_protect."""
    return sql.SQL("{}({})").format(state.relation("tidemark_protect"), value) if column in KEY_VALUE_COLUMNS else value


def _read(state: StateSchema, column: str) -> sql.Composable:
    """`column` of the run log as it was given: a key value through tidemark_reveal."""
    if column not in KEY_VALUE_COLUMNS:
        return sql.Identifier(column)
    return sql.SQL("{}({}) as {}").format(
        state.relation("tidemark_reveal"), sql.Identifier(column), sql.Identifier(column)
    )


def _value(value: object) -> object:
    return Jsonb(value) if isinstance(value, dict) else value


def interrupted_run(conn: psycopg.Connection, state: StateSchema, table_key: str) -> RunRecord | None:
    """The table's latest run, if it never ended (killed)."""
    columns = list(RunRecord.__dataclass_fields__)
    row = conn.execute(
        sql.SQL("select {} from {} where table_key = %s order by run_id desc, event_id desc limit 1").format(
            sql.SQL(", ").join(_read(state, c) for c in columns), state.relation("run_log")
        ),
        (table_key,),
    ).fetchone()
    if row is None:
        return None
    run = RunRecord(**dict(zip(columns, row, strict=True)))
    return run if run.status == "running" else None


def try_extract_lock(conn: psycopg.Connection, state: StateSchema, table_key: str) -> bool:
    """One extract per table at a time; held until release_extract_lock, or the connection's end."""
    key = state.lock_key(EXTRACT_LOCK_PREFIX, table_key)
    row = conn.execute("select pg_try_advisory_lock(hashtext(%s))", (key,)).fetchone()
    return bool(row and row[0])


def release_extract_lock(conn: psycopg.Connection, state: StateSchema, table_key: str) -> None:
    """Let the lock go now. Closing the connection lets it go only once the server's session has ended,
    after the client has gone on: a run that follows at once (a reconcile that recovers a failed sync)
    could find it still held. A connection that broke lets it go as its session ends."""
    key = state.lock_key(EXTRACT_LOCK_PREFIX, table_key)
    try:
        if conn.info.transaction_status == psycopg.pq.TransactionStatus.INERROR:
            conn.rollback()  # it would refuse the call, and would be rolled back anyway
        # A session's lock: it goes at once, whatever becomes of the transaction around the call.
        conn.execute("select pg_advisory_unlock(hashtext(%s))", (key,))
    except psycopg.Error:
        return
