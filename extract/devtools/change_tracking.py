"""SQL Server's Change Tracking, emulated in the PostgreSQL stand-in source.

SQL Server records, for each table with Change Tracking enabled, the primary key of every row a
transaction inserted, updated or deleted, with a version that orders commits;
CHANGE_TRACKING_CURRENT_VERSION() is the version of the last committed transaction, and
CHANGETABLE(CHANGES t, @v) lists each key changed after @v once. A retention cleanup drops old
records and raises the table's minimum valid version: a client whose version lies below it has
missed changes.

Here, in the schema `tidemark_change_tracking`: statement triggers record each changed key (as
jsonb), the operation, and the changing transaction's id as the version. Transaction ids are taken
when a transaction starts, not when it commits, so the current version is the snapshot's xmin less
one: every transaction below it has ended, and none still in flight can commit at or below it. A
later transaction can commit before an earlier one; its changes then show above the current version
and are read again next time, which is what a reader re-reading a key expects anyway. Each record
also takes a number from a sequence: two changes of one key are serialised by the row's lock, so the
sequence orders them where transaction ids may not (the net operation of a key is its latest).
TRUNCATE, like SQL Server's, invalidates every version the table had.
"""

from __future__ import annotations

import psycopg
from psycopg import sql

from extract.source.dialects.postgres import TRACKING as SCHEMA

_INSTALL = f"""
create schema if not exists {SCHEMA};

create table if not exists {SCHEMA}.tables (
    object_id oid primary key,
    schema_name text not null,
    table_name text not null,
    key_columns text[] not null,
    begin_version bigint not null,
    min_valid_version bigint not null
);

create sequence if not exists {SCHEMA}.change_order as bigint;

create table if not exists {SCHEMA}.changes (
    object_id oid not null,
    version bigint not null,
    change_order bigint not null default nextval('{SCHEMA}.change_order'),
    operation char(1) not null,
    key jsonb not null
);
create index if not exists changes_by_version on {SCHEMA}.changes (object_id, version);

create or replace function {SCHEMA}.current_version() returns bigint language sql volatile as $body$
    select cast(cast(pg_snapshot_xmin(pg_current_snapshot()) as text) as bigint) - 1
$body$;

create or replace function {SCHEMA}.min_valid_version(relation regclass) returns bigint language sql stable as $body$
    select tracked.min_valid_version from {SCHEMA}.tables as tracked where tracked.object_id = relation
$body$;

create or replace function {SCHEMA}.key_of(tracked oid, row_value jsonb) returns jsonb
language sql stable as $body$
    select jsonb_object_agg(name, row_value -> name)
    from {SCHEMA}.tables as t, unnest(t.key_columns) as name
    where t.object_id = tracked
$body$;

-- An insert's keys, or a delete's.
create or replace function {SCHEMA}.record_rows() returns trigger language plpgsql as $body$
begin
    if tg_op = 'INSERT' then
        insert into {SCHEMA}.changes (object_id, version, operation, key)
        select tg_relid, cast(cast(pg_current_xact_id() as text) as bigint), 'I', {SCHEMA}.key_of(tg_relid, to_jsonb(n))
        from new_rows as n;
    else
        insert into {SCHEMA}.changes (object_id, version, operation, key)
        select tg_relid, cast(cast(pg_current_xact_id() as text) as bigint), 'D', {SCHEMA}.key_of(tg_relid, to_jsonb(o))
        from old_rows as o;
    end if;
    return null;
end $body$;

-- An update that changes a key deletes the old key and inserts the new one, as SQL Server records it.
create or replace function {SCHEMA}.record_update() returns trigger language plpgsql as $body$
begin
    insert into {SCHEMA}.changes (object_id, version, operation, key)
    select
        tg_relid,
        cast(cast(pg_current_xact_id() as text) as bigint),
        case when after.key is null then 'D' when before.key is null then 'I' else 'U' end,
        coalesce(after.key, before.key)
    from (select {SCHEMA}.key_of(tg_relid, to_jsonb(o)) as key from old_rows as o) as before
    full join (select {SCHEMA}.key_of(tg_relid, to_jsonb(n)) as key from new_rows as n) as after
        on before.key = after.key;
    return null;
end $body$;

create or replace function {SCHEMA}.record_truncate() returns trigger language plpgsql as $body$
begin
    delete from {SCHEMA}.changes where object_id = tg_relid;
    update {SCHEMA}.tables set min_valid_version = cast(cast(pg_current_xact_id() as text) as bigint)
    where object_id = tg_relid;
    return null;
end $body$;

-- CHANGETABLE(CHANGES t, last_version): each key changed after last_version once, with its latest
-- change's version and operation, and the version of its insert when it was inserted after it.
create or replace function {SCHEMA}.changetable_changes(schema_name text, table_name text, last_version bigint)
returns table (
    sys_change_version bigint,
    sys_change_creation_version bigint,
    sys_change_operation text,
    sys_change_key jsonb
) language plpgsql stable as $body$
declare
    tracked oid;
begin
    select t.object_id into tracked from {SCHEMA}.tables as t
    where t.schema_name = changetable_changes.schema_name and t.table_name = changetable_changes.table_name;
    if tracked is null then
        raise exception 'Change tracking is not enabled on table ''%.%''', schema_name, table_name;
    end if;
    return query
    select
        max(c.version),
        min(c.version) filter (where c.operation = 'I'),
        cast((array_agg(c.operation order by c.change_order desc))[1] as text),
        c.key
    from {SCHEMA}.changes as c
    where c.object_id = tracked and c.version > last_version
    group by c.key;
end $body$;
"""


def install_change_tracking(conn: psycopg.Connection) -> None:
    """The schema, the records and the functions, in the source database (idempotent)."""
    conn.execute(_INSTALL)


def enable_change_tracking(conn: psycopg.Connection, schema: str, table: str) -> None:
    """ALTER TABLE ... ENABLE CHANGE_TRACKING: record every change of the table's rows from now on."""
    relation = sql.Identifier(schema, table)
    tracked = conn.execute(
        sql.SQL(
            "insert into {ct}.tables"
            " (object_id, schema_name, table_name, key_columns, begin_version, min_valid_version)"
            " select i.indrelid, %s, %s, array(select a.attname from unnest(i.indkey) with ordinality as k(attnum, n)"
            " join pg_attribute as a on a.attrelid = i.indrelid and a.attnum = k.attnum order by k.n),"
            " {ct}.current_version(), {ct}.current_version()"
            " from pg_index as i where i.indrelid = cast(%s as regclass) and i.indisprimary"
        ).format(ct=sql.Identifier(SCHEMA)),
        (schema, table, relation.as_string(conn)),
    ).rowcount
    if not tracked:
        raise ValueError(f"Change Tracking needs a primary key, and {schema}.{table} has none")
    for event, function, referencing in (
        ("insert", "record_rows", "new table as new_rows"),
        ("update", "record_update", "old table as old_rows new table as new_rows"),
        ("delete", "record_rows", "old table as old_rows"),
    ):
        conn.execute(
            sql.SQL("create trigger {} after {} on {} referencing {} for each statement execute function {}()").format(
                sql.Identifier(f"tidemark_ct_{event}"),
                sql.SQL(event),
                relation,
                sql.SQL(referencing),
                sql.Identifier(SCHEMA, function),
            )
        )
    conn.execute(
        sql.SQL("create trigger tidemark_ct_truncate after truncate on {} execute function {}()").format(
            relation, sql.Identifier(SCHEMA, "record_truncate")
        )
    )


def disable_change_tracking(conn: psycopg.Connection, schema: str, table: str) -> None:
    """ALTER TABLE ... DISABLE CHANGE_TRACKING: the records and the table's versions are gone."""
    relation = sql.Identifier(schema, table)
    for event in ("insert", "update", "delete", "truncate"):
        conn.execute(sql.SQL("drop trigger {} on {}").format(sql.Identifier(f"tidemark_ct_{event}"), relation))
    oid = sql.SQL("cast({} as regclass)").format(sql.Literal(relation.as_string(conn)))
    conn.execute(sql.SQL("delete from {}.changes where object_id = {}").format(sql.Identifier(SCHEMA), oid))
    conn.execute(sql.SQL("delete from {}.tables where object_id = {}").format(sql.Identifier(SCHEMA), oid))


def clean_up(conn: psycopg.Connection, schema: str, table: str, through: int | None = None) -> int:
    """The retention cleanup of one table: its records up to version `through` (the current version when
    None) are dropped, and its minimum valid version raised to it. Returns the new minimum."""
    relation = sql.SQL("cast({} as regclass)").format(sql.Literal(sql.Identifier(schema, table).as_string(conn)))
    ct = sql.Identifier(SCHEMA)
    row = conn.execute(
        sql.SQL(
            "with bound as (select coalesce(cast(%s as bigint), {ct}.current_version()) as version),"
            " dropped as (delete from {ct}.changes where object_id = {relation}"
            " and version <= (select version from bound))"
            " update {ct}.tables set min_valid_version = greatest(min_valid_version, (select version from bound))"
            " where object_id = {relation} returning min_valid_version"
        ).format(ct=ct, relation=relation),
        (through,),
    ).fetchone()
    assert row is not None, f"Change Tracking is not enabled on {schema}.{table}"
    return int(row[0])
