{#-
  The model body of a replica: the staged rows of pending runs, the latest run's
  version of each key. Use as {{ tidemark.tidemark_staged_batch(source('<schema>', 'stg__<table>')) }}.

  A single pending run holds each key once (the extract refuses a batch that repeats
  one), so it is read as it is; only several runs need the sort that picks each key's
  latest version. Which branch runs is decided in the database, under the merge
  lock, by one-time filters: the set of pending runs cannot change in between.
-#}
{% macro tidemark_staged_batch(staging) -%}
    {%- set keys = tidemark.tidemark_key_columns(config.get('unique_key')) -%}
    {%- set tombstones = tidemark.tidemark_tombstones(this) -%}
    {%- set how = (config.get('materialized'), config.get('incremental_strategy')) -%}
    {%- if execute and how != ('incremental', 'distinct_merge') -%}
        {#- Any other materialization would replace the replica the extract made; refused before it runs. -#}
        {{ exceptions.raise_compiler_error(
            "model " ~ this ~ " is a tidemark replica but is configured as " ~ how[0] ~ " (strategy " ~ how[1]
            ~ "), not incremental (distinct_merge): write its model again with `tidemark generate`"
        ) }}
    {%- endif -%}
    {%- if execute and load_relation(staging) is none -%}
        {{ exceptions.raise_compiler_error(
            "staging table " ~ staging ~ " does not exist yet: run the extract for this table "
            ~ "(python -m extract --table ...) before dbt build, or leave the model out with --exclude"
        ) }}
    {%- endif %}
    with pending as (
        select pending_runs.run_id
        from ({{ tidemark.tidemark_pending_runs(tidemark.tidemark_table_key(this)) }}) as pending_runs
        where pending_runs.in_batch
    )

    select staged.*
    from {{ staging }} as staged
    where
        staged.{{ tidemark.tidemark_quote(tidemark.tidemark_contract('run_id_column')) }} in (select pending.run_id from pending)
        and (select count(*) from pending) = 1
        {{- tidemark.tidemark_not_tombstoned(tombstones, keys) }}

    union all

    (
        select distinct on ({{ keys | join(', ') }}) staged.*
        from {{ staging }} as staged
        where
            staged.{{ tidemark.tidemark_quote(tidemark.tidemark_contract('run_id_column')) }} in (select pending.run_id from pending)
            and (select count(*) from pending) > 1
            {{- tidemark.tidemark_not_tombstoned(tombstones, keys) }}
        order by {{ keys | join(', ') }}, staged.{{ tidemark.tidemark_quote(tidemark.tidemark_contract('run_id_column')) }} desc
    )
{%- endmacro %}
