"""SQL Server's catalog queries: columns of one table, of the tables whose definition changed since a
time (sys.objects.modify_date, in the server's local time), and the list of tables."""

from __future__ import annotations

_COLUMNS = """\
select
    {names}c.name as column_name,
    case when t.is_assembly_type = 1 then t.name else type_name(c.system_type_id) end as base_type,
    c.max_length,
    c.precision,
    c.scale,
    c.is_nullable,
    c.column_id,
    ic.key_ordinal
from sys.columns as c
inner join sys.objects as o on o.object_id = c.object_id
inner join sys.schemas as s on s.schema_id = o.schema_id
inner join sys.types as t on t.user_type_id = c.user_type_id
left join sys.indexes as i on i.object_id = o.object_id and i.is_primary_key = 1
left join sys.index_columns as ic
    on ic.object_id = i.object_id and ic.index_id = i.index_id and ic.column_id = c.column_id
where {where} and o.type in ('U', 'V')
order by {names}c.column_id"""

#: Columns of one table: (schema, table) as ? parameters.
COLUMNS_OF_TABLE = _COLUMNS.format(names="", where="s.name = ? and o.name = ?")

#: (schema, table, column...) of every user table or view altered at or after the ? parameter.
COLUMNS_CHANGED_SINCE = _COLUMNS.format(
    names="s.name, o.name, ", where="o.is_ms_shipped = 0 and o.modify_date >= convert(datetime2(3), ?, 121)"
)

TABLES = """\
select s.name, o.name
from sys.objects as o
inner join sys.schemas as s on s.schema_id = o.schema_id
where o.type = 'U' and o.is_ms_shipped = 0
order by s.name, o.name"""

#: Every user table and view with the time its definition last changed.
TABLES_WITH_MODIFY_DATES = """\
select s.name, o.name, convert(varchar(23), o.modify_date, 121) as modify_date
from sys.objects as o
inner join sys.schemas as s on s.schema_id = o.schema_id
where o.type in ('U', 'V') and o.is_ms_shipped = 0
order by s.name, o.name"""

#: The clock modify_date is stamped by: the server's local time.
CATALOG_CLOCK = "select convert(varchar(23), sysdatetime(), 121) as now_local"
