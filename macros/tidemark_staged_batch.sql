{#-
  The model body of a replica: the staged rows of pending runs, the latest run's
  version of each key. Use as {{ tidemark_staged_batch(source('<schema>', 'stg__<table>')) }}.
-#}
{% macro tidemark_staged_batch(staging) -%}
    {%- set keys = tidemark_key_columns(config.get('unique_key')) -%}
    {%- if execute and load_relation(staging) is none -%}
        {{ exceptions.raise_compiler_error(
            "staging table " ~ staging ~ " does not exist yet: run the extract for this table "
            ~ "(python -m extract --table ...) before dbt build, or leave the model out with --exclude"
        ) }}
    {%- endif %}
    select distinct on ({{ keys | join(', ') }}) staged.*
    from {{ staging }} as staged
    where staged._tidemark_run_id in (
        select pending.run_id
        from ({{ tidemark_pending_runs(tidemark_table_key(this)) }}) as pending
        where pending.in_batch
    )
    order by {{ keys | join(', ') }}, staged._tidemark_run_id desc
{%- endmacro %}
