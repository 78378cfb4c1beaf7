{#-
  Whether the merge into the empty replica `target` may make `landed`, a first
  sync's own table (tidemark_landed_first_sync), the replica itself instead of
  copying its rows (tidemark_adopt_first_sync_sql): it is a table in the
  replica's schema, with the replica's persistence, owner, privileges and
  columns, and nothing refers to either table but its own primary key and NOT
  NULL constraints. Anything else (a view, an index, a trigger, a column
  default, a comment, storage options) would be lost with the empty replica,
  so the merge copies.
-#}
{% macro tidemark_first_sync_adoptable(target, landed) -%}
    {%- if not execute -%}{{ return(false) }}{%- endif -%}
    {%- set query -%}
    with tables as (
        select
            to_regclass({{ tidemark.tidemark_quote_literal(target | string) }}) as replica_oid,
            to_regclass({{ tidemark.tidemark_quote_literal(landed) }}) as landed_oid
    ),

    live_columns as (
        select
            a.attrelid,
            array_agg(
                array[a.attname::text, format_type(a.atttypid, a.atttypmod), a.attcollation::text,
                    a.attidentity::text, a.attgenerated::text]
                order by a.attnum
            ) as columns
        from pg_attribute as a, tables as t
        where
            a.attrelid in (t.replica_oid, t.landed_oid)
            and a.attnum > 0
            and not a.attisdropped
        group by a.attrelid
    ),

    {#- what depends on either table but its row type, toast table, primary key and
        NOT NULL constraints -#}
    dependents as (
        select d.refobjid
        from pg_depend as d, tables as t
        where
            d.refclassid = 'pg_class'::regclass
            and d.refobjid in (t.replica_oid, t.landed_oid)
            and d.classid <> 'pg_type'::regclass
            and not (
                d.classid = 'pg_class'::regclass and d.deptype = 'i'
                and exists (select 1 from pg_class as toast where toast.oid = d.objid and toast.relkind = 't')
            )
            and not (
                d.classid = 'pg_constraint'::regclass
                and exists (
                    select 1 from pg_constraint as c
                    where c.oid = d.objid and c.conrelid = d.refobjid and c.contype in ('p', 'n')
                )
            )
    )

    select
        s.relkind = 'r' and r.relkind = 'r'
        and s.relpersistence = r.relpersistence
        and s.relnamespace = r.relnamespace and s.reltablespace = r.reltablespace
        and s.relowner = r.relowner
        and r.relowner = (select u.oid from pg_roles as u where u.rolname = current_user)
        and s.relacl is not distinct from r.relacl
        and r.reloptions is null
        and not r.relrowsecurity
        and not exists (
            select 1 from pg_inherits as i where r.oid in (i.inhrelid, i.inhparent) or s.oid in (i.inhrelid, i.inhparent)
        )
        and not exists (
            select 1 from pg_description as d where d.objoid = r.oid and d.classoid = 'pg_class'::regclass
        )
        and not exists (select 1 from dependents)
        and (select c.columns from live_columns as c where c.attrelid = s.oid)
        = (select c.columns from live_columns as c where c.attrelid = r.oid)
    from tables as t
    inner join pg_class as r on t.replica_oid = r.oid
    inner join pg_class as s on t.landed_oid = s.oid
    {%- endset -%}
    {%- set found = run_query(query) -%}
    {{ return(found.rows | length == 1 and found.rows[0][0] == true) }}
{%- endmacro %}
