"""SQL Server's sys.objects.modify_date, emulated in the PostgreSQL stand-in source.

SQL Server stamps a table's modify_date when it is created or altered, at the time the statement
runs (not when it commits). Here an event trigger on ddl_command_end stamps each relation a DDL
statement touched with the statement's clock, in UTC; `tidemark_catalog.objects` lists every table
and view with that stamp, or the time of installation for those no DDL touched since. A catalog read
then asks for the definitions changed since its marker, as it does of SQL Server.
"""

from __future__ import annotations

import psycopg

_INSTALL = """
create schema if not exists tidemark_catalog;

create table if not exists tidemark_catalog.installed (
    only_row boolean primary key default true check (only_row),
    installed_at timestamp not null default (clock_timestamp() at time zone 'UTC')
);
insert into tidemark_catalog.installed default values on conflict do nothing;

create table if not exists tidemark_catalog.ddl_times (
    object_id oid primary key,
    modified_at timestamp not null
);

create or replace function tidemark_catalog.record_ddl() returns event_trigger language plpgsql as $body$
begin
    -- A statement can report a relation twice (create or replace view does): one row each.
    insert into tidemark_catalog.ddl_times as stamped (object_id, modified_at)
    select touched.objid, clock_timestamp() at time zone 'UTC'
    from (
        select distinct objid
        from pg_event_trigger_ddl_commands()
        where classid = 'pg_catalog.pg_class'::regclass and objid is not null
    ) as touched
    on conflict (object_id) do update set modified_at = excluded.modified_at;
end $body$;

do $$ begin
    if not exists (select 1 from pg_event_trigger where evtname = 'tidemark_record_ddl') then
        create event trigger tidemark_record_ddl on ddl_command_end
        execute function tidemark_catalog.record_ddl();
    end if;
end $$;

create or replace view tidemark_catalog.objects as
select
    n.nspname as schema_name,
    c.relname as object_name,
    coalesce(stamped.modified_at, installed.installed_at) as modify_date
from pg_catalog.pg_class as c
inner join pg_catalog.pg_namespace as n on c.relnamespace = n.oid
cross join tidemark_catalog.installed as installed
left join tidemark_catalog.ddl_times as stamped on c.oid = stamped.object_id
where c.relkind in ('r', 'p', 'v', 'm', 'f')
    and n.nspname not in ('pg_catalog', 'information_schema', 'tidemark_catalog')
    and n.nspname not like 'pg\\_toast%';
"""


def install_ddl_times(conn: psycopg.Connection) -> None:
    """The stamps, their trigger and the listing, in the source database (idempotent; superuser)."""
    conn.execute(_INSTALL)
