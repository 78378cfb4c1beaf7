"""The run log in schema _migration of the target: append-only, one row per run event."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import psycopg
from psycopg import sql

STATE_SCHEMA = "_migration"
#: Serialises DDL between extracts running at once: CREATE ... IF NOT EXISTS races on the catalog.
DDL_LOCK = "select pg_advisory_xact_lock(hashtext('tidemark:ddl'))"

_DDL = """
create schema if not exists _migration;
revoke all on schema _migration from public;
create sequence if not exists _migration.run_id_seq;
create table if not exists _migration.run_log (
    event_id bigserial primary key,
    run_id bigint not null,
    table_key text not null,
    source_schema text not null,
    source_table text not null,
    target_schema text not null,
    target_table text not null,
    status text not null check (status in ('running', 'landed', 'failed')),
    migration_type text not null check (migration_type in ('full', 'incremental')),
    cursor_column text,
    watermark_used text,
    watermark_candidate text,
    source_filter text,
    rows_landed bigint,
    error_message text,
    started_at timestamptz not null,
    ended_at timestamptz,
    logged_at timestamptz not null default clock_timestamp()
);
alter table _migration.run_log add column if not exists last_pk_synced text;
alter table _migration.run_log add column if not exists partitions_planned integer;
alter table _migration.run_log add column if not exists partitions_landed integer;
alter table _migration.run_log add column if not exists rows_planned bigint;
-- 'spark' (partitions read in parallel by Spark) or 'driver' (a small batch, from the driver's JVM).
alter table _migration.run_log add column if not exists landed_by text;
create index if not exists run_log_table_key on _migration.run_log (table_key, run_id);
create table if not exists _migration.merge_log (
    merge_id bigserial primary key,
    table_key text not null,
    run_ids bigint [] not null,
    rows_in_batch bigint not null,
    rows_inserted bigint not null,
    rows_updated bigint not null,
    rows_unchanged bigint not null,
    rows_deleted bigint not null,
    merge_started_at timestamptz not null,
    merged_at timestamptz not null default clock_timestamp()
);
create index if not exists merge_log_table_key on _migration.merge_log (table_key);
-- One row per key-range partition of a run, planned before reading; a partition's
-- staging rows and its landed_at commit in one transaction.
create table if not exists _migration.partition_log (
    run_id bigint not null,
    partition_no integer not null,
    segment text not null,
    start_position text,
    end_position text,
    rows_landed bigint,
    landed_at timestamptz,
    primary key (run_id, partition_no)
);
-- One row per snapshot landed for an as-of history: landed by the extract, applied by
-- the history model (applied_at set in the transaction that applies it).
create table if not exists _migration.snapshot_log (
    run_id bigint primary key,
    table_key text not null,
    as_of date not null,
    origin text not null,
    status text not null check (status in ('running', 'landed', 'failed')),
    rows_landed bigint,
    error_message text,
    started_at timestamptz not null,
    landed_at timestamptz,
    applied_at timestamptz,
    apply_seconds double precision,
    versions_removed bigint,
    versions_added bigint
);
create index if not exists snapshot_log_table_key on _migration.snapshot_log (table_key, run_id);
-- The dates each as-of history holds (see macros/tidemark_scd2_sync_sql.sql).
create table if not exists _migration.history_dates (
    table_key text not null,
    as_of date not null,
    primary key (table_key, as_of)
);
"""

_COMMITTED_WATERMARK = """
select max(r.watermark_candidate)
from _migration.merge_log as m
inner join _migration.run_log as r
    on r.run_id = any(m.run_ids) and r.status = 'landed'
where m.table_key = %s
"""


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
    last_pk_synced: str | None = None
    partitions_planned: int | None = None
    partitions_landed: int | None = None
    rows_planned: int | None = None
    landed_by: str | None = None
    error_message: str | None = None
    ended_at: datetime | None = None


def ensure_state_schema(conn: psycopg.Connection) -> None:
    with conn.transaction():
        conn.execute(DDL_LOCK)
        conn.execute(_DDL)


def committed_watermark(conn: psycopg.Connection, table_key: str) -> str | None:
    row = conn.execute(_COMMITTED_WATERMARK, (table_key,)).fetchone()
    return None if row is None else row[0]


def next_run_id(conn: psycopg.Connection) -> int:
    row = conn.execute("select nextval('_migration.run_id_seq')").fetchone()
    assert row is not None
    return int(row[0])


def merge_lock_sql(table_key: str) -> tuple[str, tuple[str]]:
    """The lock that the merge also takes (see macros/tidemark_merge_lock.sql)."""
    return "select pg_advisory_xact_lock(hashtext(%s))", ("tidemark:merge:" + table_key,)


def append_event(conn: psycopg.Connection, run: RunRecord) -> None:
    """Append the run's current state; a 'landed' event is serialised with merges of the table."""
    columns = list(vars(run))
    statement = sql.SQL("insert into _migration.run_log ({}) values ({})").format(
        sql.SQL(", ").join(map(sql.Identifier, columns)),
        sql.SQL(", ").join(sql.Placeholder() * len(columns)),
    )
    with conn.transaction():
        if run.status == "landed":
            conn.execute(*merge_lock_sql(run.table_key))
        conn.execute(statement, [getattr(run, c) for c in columns])


def interrupted_run(conn: psycopg.Connection, table_key: str) -> RunRecord | None:
    """The table's latest run, if it stopped while reading (killed) after planning its partitions."""
    columns = list(RunRecord.__dataclass_fields__)
    row = conn.execute(
        sql.SQL(
            "select {} from _migration.run_log where table_key = %s order by run_id desc, event_id desc limit 1"
        ).format(sql.SQL(", ").join(map(sql.Identifier, columns))),
        (table_key,),
    ).fetchone()
    if row is None:
        return None
    run = RunRecord(**dict(zip(columns, row, strict=True)))
    return run if run.status == "running" and run.partitions_planned is not None else None


def try_extract_lock(conn: psycopg.Connection, table_key: str) -> bool:
    """One extract per table at a time; held for the connection's life."""
    row = conn.execute("select pg_try_advisory_lock(hashtext(%s))", ("tidemark:extract:" + table_key,)).fetchone()
    return bool(row and row[0])
