"""SQL Server's rowversion, emulated in the PostgreSQL stand-in source.

In SQL Server every insert and update of a row with a rowversion column stamps it with the next
value of one database-wide counter, and MIN_ACTIVE_ROWVERSION() is the lowest value a transaction
still in flight holds (or the next value when none does): no row can later commit below it.

Here: a domain `rowversion` over bigint; a sequence for the counter; a trigger that stamps the
column from it on insert and update; and `min_active_rowversion()`. A transaction's first stamp
takes a transaction-scoped advisory lock whose key is that value, visible to every session in
pg_locks until the transaction ends: the lowest such key is the lowest active value. Taking a
value and announcing it happen under a shared session lock that the reader takes exclusively, so
the reader never sees a value taken but not yet announced. Values stay below 2^31 (an advisory
lock's key part is 32 bits), plenty for tests and the demo.
"""

from __future__ import annotations

import psycopg
from psycopg import sql

#: Advisory lock keys: (class, 0) guards taking a value; (class, value) announces an active one.
ALLOCATION_CLASS = 0x7276  # 'rv'
ACTIVE_CLASS = 0x7277

_INSTALL = f"""
do $$ begin
    if not exists (select 1 from pg_type where typname = 'rowversion' and typtype = 'd') then
        create domain public.rowversion as bigint;
    end if;
end $$;

create sequence if not exists public.rowversion_counter as bigint minvalue 1 maxvalue 2147483647;

create or replace function public.stamp_rowversion() returns trigger language plpgsql as $body$
declare
    stamp bigint;
begin
    perform pg_advisory_lock_shared({ALLOCATION_CLASS}, 0);
    stamp := nextval('public.rowversion_counter');
    -- A transaction's first stamp is its lowest: announce that one only.
    if coalesce(current_setting('tidemark.rowversion_xact', true), '') <> txid_current()::text then
        perform pg_advisory_xact_lock({ACTIVE_CLASS}, cast(stamp as integer));
        perform set_config('tidemark.rowversion_xact', txid_current()::text, true);
    end if;
    perform pg_advisory_unlock_shared({ALLOCATION_CLASS}, 0);
    new := jsonb_populate_record(new, jsonb_build_object(tg_argv[0], stamp));
    return new;
end $body$;

create or replace function public.min_active_rowversion() returns bigint language plpgsql as $body$
declare
    next_value bigint;
    lowest bigint;
begin
    perform pg_advisory_lock({ALLOCATION_CLASS}, 0);
    select case when is_called then last_value + 1 else last_value end
    into next_value from public.rowversion_counter;
    select min(cast(objid as bigint)) into lowest from pg_locks
    where locktype = 'advisory' and classid = {ACTIVE_CLASS} and objsubid = 2 and granted;
    perform pg_advisory_unlock({ALLOCATION_CLASS}, 0);
    return least(next_value, coalesce(lowest, next_value));
end $body$;
"""


def install_rowversion(conn: psycopg.Connection) -> None:
    """The domain, counter and functions, in the source database's public schema (idempotent)."""
    conn.execute(_INSTALL)


def stamp_with_rowversion(conn: psycopg.Connection, schema: str, table: str, column: str) -> None:
    """Add `column` of type rowversion to the table, stamp every row, and keep it stamped."""
    relation = sql.Identifier(schema, table)
    name = sql.Identifier(column)
    conn.execute(sql.SQL("alter table {} add column {} rowversion").format(relation, name))
    conn.execute(sql.SQL("update {} set {} = nextval('public.rowversion_counter')").format(relation, name))
    conn.execute(sql.SQL("alter table {} alter column {} set not null").format(relation, name))
    conn.execute(
        sql.SQL(
            "create trigger {} before insert or update on {} for each row execute function public.stamp_rowversion({})"
        ).format(sql.Identifier(f"{table}__{column}"), relation, sql.Literal(column))
    )
