{#-
  The model body of a replica: the staged rows of pending runs, the latest run's
  version of each key. Use as {{ tidemark.tidemark_staged_batch(source('<schema>', 'stg__<table>')) }}.

  A single pending run holds each key once (the extract refuses a batch that repeats
  one), so it is read as it is; only several runs need the sort that picks each key's
  latest version. Which branch runs is decided in the database, under the merge
  lock, by one-time filters: the set of pending runs cannot change in between.

  A staged row is left out when a later pending run tombstoned its key. The pending
  runs filter staging and the tombstones as one array value, never as a join, and the
  tombstones are reduced to each key's latest before they meet staging, on the key
  alone: every row of a batch carries the same run id, and a join that hashed on it
  put the whole batch in one bucket (a merge of 100,000 repairs ran for minutes).
-#}
{% macro tidemark_staged_batch(staging) -%}
    {%- set keys = tidemark.tidemark_key_columns(config.get('unique_key')) -%}
    {%- set existing = tidemark.tidemark_relations_beside(this, [staging]) -%}
    {%- set tombstones = tidemark.tidemark_tombstones(this) -%}
    {%- set how = (config.get('materialized'), config.get('incremental_strategy')) -%}
    {%- if execute and how[0] != 'tidemark_replica' -%}
        {#- Any other materialization would replace the replica the extract made; refused before it runs.
            (Models generated before tidemark_replica were incremental, strategy distinct_merge.) -#}
        {{ exceptions.raise_compiler_error(
            "model " ~ this ~ " is a tidemark replica but is configured as " ~ how[0] ~ " (strategy " ~ how[1]
            ~ "), not tidemark_replica: write its model again with `tidemark generate`"
        ) }}
    {%- endif -%}
    {%- if execute and existing[staging | string] is none -%}
        {{ exceptions.raise_compiler_error(
            "staging table " ~ staging ~ " does not exist yet: run the extract for this table "
            ~ "(python -m extract --table ...) before dbt build, or leave the model out with --exclude"
        ) }}
    {%- endif %}
    {%- set run_id = tidemark.tidemark_quote(tidemark.tidemark_contract('run_id_column')) %}
    with pending as (
        select pending_runs.run_id
        from ({{ tidemark.tidemark_pending_runs(tidemark.tidemark_table_key(this)) }}) as pending_runs
        where pending_runs.in_batch
    ),

    pending_ids as (
        select array(select pending.run_id from pending) as run_ids
    ),
    {%- if tombstones is not none %}

    latest_tombstone as (
        select
            {% for key in keys %}tombstone.{{ key }}, {% endfor -%}
            max(tombstone.{{ run_id }}) as tombstone_run
        from {{ tombstones }} as tombstone
        where tombstone.{{ run_id }} = any(cast((select pending_ids.run_ids from pending_ids) as bigint[]))
        group by {% for key in keys %}tombstone.{{ key }}{{ ", " if not loop.last }}{% endfor %}
    ),
    {%- endif %}

    staged as not materialized (
        select staged.*
        from {{ staging }} as staged
        {%- if tombstones is not none %}
            {#- A full join has no nested-loop plan: however few rows the statistics promise, the
                staged rows meet the tombstones hashed or merged, once. Its filter is kept non-strict
                (coalesce), or the planner would make it a left join again. #}
            full join latest_tombstone
                on
                    {%- for key in keys %}
                    latest_tombstone.{{ key }} = staged.{{ key }}{{ " and" if not loop.last }}
                    {%- endfor %}
        {%- endif %}
        where
            coalesce(staged.{{ run_id }}, 0) = any(cast((select pending_ids.run_ids from pending_ids) as bigint[]))
            {%- if tombstones is not none %}
            and coalesce(latest_tombstone.tombstone_run <= staged.{{ run_id }}, true)
            {%- endif %}
    )

    select staged.*
    from staged
    where (select count(*) from pending) = 1

    union all

    (
        select distinct on ({{ keys | join(', ') }}) staged.*
        from staged
        where (select count(*) from pending) > 1
        order by {{ keys | join(', ') }}, staged.{{ run_id }} desc
    )
{%- endmacro %}
