{#-
  Whether the merge into the empty replica `target` may make `staging` the replica
  itself instead of copying its rows (tidemark_adopt_staging_sql): staging is a
  logged table (a first sync's, extract/landing/first_sync.py) in the replica's schema,
  with the replica's owner, privileges and columns; it holds the one pending run,
  which is the table's latest (so no other run's rows); nothing but the batch
  view reads it, and nothing refers to the replica but its own primary key and
  NOT NULL constraints. Anything else (a view, an index, a trigger, a column
  default, a comment, storage options) would be lost with the empty replica, so
  the merge copies.
-#}
{% macro tidemark_staging_adoptable(target, staging, batch_view, table_key) -%}
    {%- if not execute -%}{{ return(false) }}{%- endif -%}
    {%- set query -%}
    with pending as (
        {{ tidemark.tidemark_pending_runs(table_key) }}
    ),

    tables as (
        select
            to_regclass({{ tidemark.tidemark_quote_literal(target | string) }}) as replica_oid,
            to_regclass({{ tidemark.tidemark_quote_literal(staging | string) }}) as staging_oid,
            to_regclass({{ tidemark.tidemark_quote_literal(batch_view | string) }}) as view_oid
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
            a.attrelid in (t.replica_oid, t.staging_oid)
            and a.attnum > 0
            and not a.attisdropped
            and a.attname not in (
                {{ tidemark.tidemark_quote_literal(tidemark.tidemark_contract('run_id_column')) }},
                {{ tidemark.tidemark_quote_literal(tidemark.tidemark_contract('partition_column')) }}
            )
        group by a.attrelid
    ),

    {#- what depends on either table but its row type, toast table, primary key and
        NOT NULL constraints, staging's column defaults, and the batch view; a default
        of the replica's would be lost -#}
    dependents as (
        select d.refobjid
        from pg_depend as d, tables as t
        where
            d.refclassid = 'pg_class'::regclass
            and d.refobjid in (t.replica_oid, t.staging_oid)
            and d.classid <> 'pg_type'::regclass
            and not (d.classid = 'pg_attrdef'::regclass and d.refobjid = t.staging_oid)
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
            and not (
                d.classid = 'pg_rewrite'::regclass
                and exists (select 1 from pg_rewrite as w where w.oid = d.objid and w.ev_class = t.view_oid)
            )
    )

    select
        (select count(*) from pending) = 1
        and not exists (
            select 1 from _migration.run_log as later
            where later.table_key = {{ table_key }} and later.run_id > (select max(pending.run_id) from pending)
        )
        and s.relpersistence = 'p' and s.relkind = 'r' and r.relkind = 'r' and v.relkind = 'v'
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
    inner join pg_class as s on t.staging_oid = s.oid
    inner join pg_class as v on t.view_oid = v.oid
    {%- endset -%}
    {%- set found = run_query(query) -%}
    {{ return(found.rows | length == 1 and found.rows[0][0] == true) }}
{%- endmacro %}
