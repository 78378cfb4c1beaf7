"""SQL Server's Change Data Capture (CDC), emulated in the PostgreSQL stand-in source.

SQL Server's capture job copies every change of a captured table from the log into its change table,
cdc.<capture_instance>_CT: the row's image, the commit's log sequence number (__$start_lsn), its order in
the transaction (__$seqval) and the operation (1 delete, 2 insert, 3 the row before an update, 4 after).
cdc.fn_cdc_get_all_changes_<capture_instance>(from, to, N'all') reads them; sys.fn_cdc_get_max_lsn() is
the highest LSN captured, and sys.fn_cdc_get_min_lsn(instance) the lowest its change table still holds
(a cleanup raises it). A table has at most two capture instances, so that a schema change can be followed
by a second one from its start_lsn.

Here, in the schema `cdc`: statement triggers write the images, with no LSN yet; at commit a deferred
trigger takes the next LSN under an exclusive lock held until the transaction ends, so LSNs order
commits, and stamps the transaction's rows. The highest LSN is read under that lock, so none below it
is still to commit. Images are jsonb-free: the change table has the source's columns, typed.
"""

from __future__ import annotations

import psycopg
from psycopg import sql

from extract.source.dialects.postgres import CDC_SCHEMA as SCHEMA

#: The advisory lock that orders commits of captured changes: (class, 0).
COMMIT_CLASS = 0x6364  # 'cd'

_INSTALL = f"""
create schema if not exists {SCHEMA};
create sequence if not exists {SCHEMA}.lsn as bigint;
create sequence if not exists {SCHEMA}.seqval as bigint;

create table if not exists {SCHEMA}.change_tables (
    capture_instance text primary key,
    source_object_id oid not null,
    source_schema text not null,
    source_table text not null,
    start_lsn bigint not null,
    min_lsn bigint not null
);

create table if not exists {SCHEMA}.captured_columns (
    capture_instance text not null,
    column_name text not null,
    column_ordinal integer not null,
    primary key (capture_instance, column_name)
);

create or replace function {SCHEMA}.fn_cdc_get_max_lsn() returns bigint language plpgsql volatile as $body$
declare
    highest bigint;
begin
    -- A commit holds the lock from its LSN to its end: once it is free, every LSN given is committed.
    perform pg_advisory_lock({COMMIT_CLASS}, 0);
    select case when is_called then last_value else 0 end into highest from {SCHEMA}.lsn;
    perform pg_advisory_unlock({COMMIT_CLASS}, 0);
    return highest;
end $body$;

create or replace function {SCHEMA}.fn_cdc_get_min_lsn(instance text) returns bigint language sql stable as $body$
    select coalesce((select min_lsn from {SCHEMA}.change_tables where capture_instance = instance), 0)
$body$;

-- At commit, once per transaction and change table: the transaction's LSN, taken under the lock it keeps.
create or replace function {SCHEMA}.stamp_commit() returns trigger language plpgsql as $body$
declare
    stamp bigint;
    done text := 'tidemark_cdc.stamped_' || tg_relid;
begin
    if coalesce(current_setting(done, true), '') = txid_current()::text then
        return null;
    end if;
    stamp := nullif(current_setting('tidemark_cdc.lsn_' || txid_current(), true), '')::bigint;
    if stamp is null then
        perform pg_advisory_xact_lock({COMMIT_CLASS}, 0);
        stamp := nextval('{SCHEMA}.lsn');
        perform set_config('tidemark_cdc.lsn_' || txid_current(), stamp::text, true);
    end if;
    execute format(
        'update %s set "__$start_lsn" = $1 where "__$xid" = $2 and "__$start_lsn" is null', tg_relid::regclass
    ) using stamp, txid_current();
    perform set_config(done, txid_current()::text, true);
    return null;
end $body$;

-- The images of a statement's rows: arguments are the change table, the key's columns and the captured
-- columns, each list quoted. An update that changes a key deletes the old key and inserts the new one.
create or replace function {SCHEMA}.capture() returns trigger language plpgsql as $body$
declare
    into_images text := format(
        'insert into %s ("__$start_lsn", "__$seqval", "__$operation", "__$xid", %s) select null, nextval(%L), ',
        tg_argv[0], tg_argv[2], '{SCHEMA}.seqval'
    );
    keys text := tg_argv[1];
    captured text := ', txid_current(), ' || tg_argv[2];
begin
    if tg_op = 'INSERT' then
        execute into_images || '2' || captured || ' from new_rows';
    elsif tg_op = 'DELETE' then
        execute into_images || '1' || captured || ' from old_rows';
    else
        execute into_images || format('case when (%1$s) in (select %1$s from new_rows) then 3 else 1 end', keys)
            || captured || ' from old_rows';
        execute into_images || format('case when (%1$s) in (select %1$s from old_rows) then 4 else 2 end', keys)
            || captured || ' from new_rows';
    end if;
    return null;
end $body$;
"""


def install_cdc(conn: psycopg.Connection) -> None:
    """The schema, the LSNs and the functions, in the source database (idempotent)."""
    conn.execute(_INSTALL)


def _key_columns(conn: psycopg.Connection, relation: sql.Composable) -> list[str]:
    rows = conn.execute(
        sql.SQL(
            "select a.attname from pg_index as i cross join unnest(i.indkey) with ordinality as k(attnum, n)"
            " join pg_attribute as a on a.attrelid = i.indrelid and a.attnum = k.attnum"
            " where i.indrelid = cast({} as regclass) and i.indisprimary order by k.n"
        ).format(sql.Literal(relation.as_string(conn)))
    ).fetchall()
    return [str(row[0]) for row in rows]


def enable_table(
    conn: psycopg.Connection,
    schema: str,
    table: str,
    capture_instance: str | None = None,
    captured_columns: list[str] | None = None,
) -> str:
    """sys.sp_cdc_enable_table: capture the table's changes from now on, in a capture instance of its own
    (by default schema_table), of every column or of `captured_columns` (@captured_column_list, the key's
    among them); returns the instance's name."""
    instance = capture_instance or f"{schema}_{table}"
    relation = sql.Identifier(schema, table)
    keys = _key_columns(conn, relation)
    if not keys:
        raise ValueError(f"CDC here needs a primary key, and {schema}.{table} has none")
    columns = _columns(conn, relation)
    captured = columns if captured_columns is None else [c for c in columns if c in captured_columns]
    if len(captured) != len(set(captured_columns or columns)) or not set(keys) <= set(captured):
        raise ValueError(f"captured columns {captured_columns} are not columns of {schema}.{table} with its key")
    change_table = sql.Identifier(SCHEMA, f"{instance}_CT")
    _create_change_table(conn, relation, change_table, [c for c in columns if c not in captured])
    with conn.cursor() as cursor:
        cursor.executemany(
            sql.SQL("insert into {}.captured_columns values (%s, %s, %s)").format(sql.Identifier(SCHEMA)),
            [(instance, column, ordinal) for ordinal, column in enumerate(captured, start=1)],
        )
    conn.execute(sql.SQL("create index on {} ({})").format(change_table, sql.Identifier("__$start_lsn")))
    conn.execute(
        sql.SQL(
            "create constraint trigger stamp_commit after insert on {} deferrable initially deferred"
            " for each row execute function {}()"
        ).format(change_table, sql.Identifier(SCHEMA, "stamp_commit"))
    )
    _capture(conn, instance, relation, change_table, keys, captured)
    conn.execute(
        sql.SQL(
            "create function {}(from_lsn bigint, to_lsn bigint, row_filter text) returns setof {} language sql stable"
            " as $$ select * from {} where {} between from_lsn and to_lsn"
            " and ({} <> 3 or row_filter = 'all update old') $$"
        ).format(
            sql.Identifier(SCHEMA, f"fn_cdc_get_all_changes_{instance}"),
            change_table,
            change_table,
            sql.Identifier("__$start_lsn"),
            sql.Identifier("__$operation"),
        )
    )
    conn.execute(
        sql.SQL(
            "insert into {}.change_tables values (%s, cast(%s as regclass), %s, %s, {}.fn_cdc_get_max_lsn() + 1,"
            " {}.fn_cdc_get_max_lsn() + 1)"
        ).format(*[sql.Identifier(SCHEMA)] * 3),
        (instance, relation.as_string(conn), schema, table),
    )
    return instance


def _create_change_table(
    conn: psycopg.Connection, relation: sql.Identifier, change_table: sql.Identifier, left_out: list[str]
) -> None:
    """cdc.<instance>_CT: the change rows' own columns, then the table's but for those `left_out`."""
    conn.execute(
        sql.SQL(
            'create table {} ("__$start_lsn" bigint, "__$seqval" bigint not null, "__$operation" integer not null,'
            ' "__$xid" bigint not null, like {})'
        ).format(change_table, relation)
    )
    for column in left_out:
        conn.execute(sql.SQL("alter table {} drop column {}").format(change_table, sql.Identifier(column)))


def _capture(
    conn: psycopg.Connection,
    instance: str,
    relation: sql.Identifier,
    change_table: sql.Identifier,
    keys: list[str],
    captured: list[str],
) -> None:
    """The statement triggers that write the images of the `captured` columns."""
    arguments = [
        sql.Literal(text.as_string(conn))
        for text in (
            change_table,
            sql.SQL(", ").join(map(sql.Identifier, keys)),
            sql.SQL(", ").join(map(sql.Identifier, captured)),
        )
    ]
    for event, referencing in (
        ("insert", "new table as new_rows"),
        ("update", "old table as old_rows new table as new_rows"),
        ("delete", "old table as old_rows"),
    ):
        conn.execute(
            sql.SQL(
                "create trigger {} after {} on {} referencing {} for each statement execute function {}({})"
            ).format(
                sql.Identifier(f"cdc_{instance}_{event}"),
                sql.SQL(event),
                relation,
                sql.SQL(referencing),
                sql.Identifier(SCHEMA, "capture"),
                sql.SQL(", ").join(arguments),
            )
        )


def _columns(conn: psycopg.Connection, relation: sql.Composable) -> list[str]:
    rows = conn.execute(
        sql.SQL(
            "select attname from pg_attribute where attrelid = cast({} as regclass) and attnum > 0"
            " and not attisdropped order by attnum"
        ).format(sql.Literal(relation.as_string(conn)))
    ).fetchall()
    return [str(row[0]) for row in rows]
