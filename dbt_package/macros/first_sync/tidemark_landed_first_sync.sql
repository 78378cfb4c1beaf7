{#-
  The table a first sync of the replica `target` landed in, when the extract
  recorded on it (its comment: extract/landing/landed_first_sync.py) that a run
  of this batch landed there: that run's rows are in it, not in staging, and the
  merge makes it the replica (tidemark_first_sync_sql). None when no run of the
  batch did, or while dbt only parses. Read under the merge lock, which the
  extract takes to record it. Such a run is the batch's only one and its replica
  empty, as another run moves the rows into staging before it lands; anything
  else is refused, so that no landed row is left out.
-#}
{% macro tidemark_landed_first_sync(target, table_key) -%}
    {%- if not execute -%}{{ return(none) }}{%- endif -%}
    {%- set query -%}
    with in_batch as (
        select pending_runs.run_id
        from ({{ tidemark.tidemark_pending_runs(table_key) }}) as pending_runs
        where pending_runs.in_batch
    )

    select
        quote_ident(n.nspname) || '.' || quote_ident(c.relname) as landed,
        recorded.run_id,
        (select count(*) from in_batch) = 1 and not exists (select 1 from {{ target }}) as mergeable
    from in_batch as recorded
    inner join pg_description as d
        on d.description = {{ tidemark.tidemark_quote_literal(tidemark.tidemark_contract('first_sync_record')) }}
        || recorded.run_id
    inner join pg_class as c on d.objoid = c.oid
    inner join pg_namespace as n on c.relnamespace = n.oid
    where
        d.classoid = 'pg_class'::regclass
        and d.objsubid = 0
        and c.relkind = 'r'
        and c.relnamespace = (
            select r.relnamespace from pg_class as r
            where r.oid = to_regclass({{ tidemark.tidemark_quote_literal(target | string) }})
        )
    {%- endset -%}
    {%- set found = run_query(query) -%}
    {%- if found.rows | length == 0 -%}{{ return(none) }}{%- endif -%}
    {%- if not found.rows[0][2] -%}
        {{ exceptions.raise_compiler_error(
            "run " ~ found.rows[0][1] ~ " of " ~ target ~ " landed as a first sync in " ~ found.rows[0][0]
            ~ ", but the replica holds rows or other runs wait with it: run the extract of this table again"
            ~ " (it moves those rows into staging), then build"
        ) }}
    {%- endif -%}
    {{ return(found.rows[0][0]) }}
{%- endmacro %}
