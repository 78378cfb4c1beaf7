"""The PostgreSQL stand-in's catalog queries: columns of one table, of the tables changed since a
time (extract/devtools/ddl_times.py stamps them as SQL Server does), and the list of tables."""

from __future__ import annotations

_COLUMNS = """\
select
    {names}a.attname as column_name,
    case when t.typtype = 'd' and t.typname = 'rowversion' then 'rowversion' else format_type(
        coalesce(nullif(t.typbasetype, 0), a.atttypid),
        case when t.typbasetype <> 0 then t.typtypmod else a.atttypmod end
    ) end as type_text,
    case when a.attnotnull or t.typnotnull then '0' else '1' end as is_nullable,
    a.attnum as column_id,
    array_position(i.indkey::int2 [], a.attnum) as key_ordinal
from pg_catalog.pg_attribute as a
inner join pg_catalog.pg_class as c on c.oid = a.attrelid
inner join pg_catalog.pg_namespace as n on n.oid = c.relnamespace
inner join pg_catalog.pg_type as t on t.oid = a.atttypid
left join pg_catalog.pg_index as i on i.indrelid = c.oid and i.indisprimary
{joins}where {where} and a.attnum > 0 and not a.attisdropped
    and c.relkind in ('r', 'p', 'v', 'm', 'f')
order by {names}a.attnum"""

#: Columns of one table: (schema, table) as ? parameters.
COLUMNS_OF_TABLE = _COLUMNS.format(names="", joins="", where="n.nspname = ? and c.relname = ?")

#: (schema, table, column...) of every table stamped at or after the ? parameter (UTC text).
COLUMNS_CHANGED_SINCE = _COLUMNS.format(
    names="n.nspname, c.relname, ",
    joins="inner join tidemark_catalog.objects as o on o.schema_name = n.nspname and o.object_name = c.relname\n",
    where="o.modify_date >= cast(? as timestamp)",
)

TABLES = """\
select table_schema, table_name
from information_schema.tables
where table_schema not in (
    'pg_catalog', 'information_schema', 'tidemark_catalog', 'tidemark_change_tracking', 'cdc'
)
    and table_type = 'BASE TABLE'
order by table_schema, table_name"""

#: Every table and view with the time its definition last changed.
TABLES_WITH_MODIFY_DATES = """\
select schema_name, object_name, to_char(modify_date, 'YYYY-MM-DD HH24:MI:SS.US') as modify_date
from tidemark_catalog.objects
order by schema_name, object_name"""

#: Whether the stamps are installed: without them every catalog read reads every table.
TRACKS_MODIFY_DATES = "select case when to_regclass('tidemark_catalog.objects') is null then '0' else '1' end"
