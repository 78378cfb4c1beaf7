{#-
  How a replica's history is built: the versions dbt's check snapshot makes
  (hard deletes invalidated), from one statement that compares only the keys the
  replica's merges changed since the history last ran (the changed-keys table
  beside the replica), or every row when no key records the change (a row in
  history_rescans, or no changed-keys table yet). dbt's own snapshot
  materialization asks the database for columns five times and builds a staging
  table per run; on hundreds of replicas that costs more than the comparisons.
  Same columns, same versions, same ids and times as dbt's (tests/test_history_changes.py
  compares them after random rounds). Runs under the replica's merge lock (the
  pre-hook); the post-hook empties what it compared.
-#}
{% materialization tidemark_history, adapter='postgres' -%}
    {%- set replica = config.get('tidemark_replica') -%}
    {%- set beside = api.Relation.create(database=target.database, schema=replica[0], identifier=replica[1]) if replica else this -%}
    {%- set existing = tidemark.tidemark_relations_beside(beside, [this])[this | string] -%}
    {%- if existing is not none and not existing.is_table -%}
        {% do exceptions.relation_wrong_type(existing, 'table') %}
    {%- endif -%}
    {%- set how = (config.get('strategy'), adapter.get_hard_deletes_behavior(config)) -%}
    {%- if how != ('check', 'invalidate') or config.get('dbt_valid_to_current') -%}
        {{ exceptions.raise_compiler_error(
            "history " ~ this ~ " is built as dbt's check snapshot with hard deletes invalidated, not as strategy "
            ~ how[0] ~ " with hard_deletes " ~ how[1] ~ " (or a dbt_valid_to_current): write it again with `tidemark generate`"
        ) }}
    {%- endif -%}
    {%- set names = config.get('snapshot_table_column_names') or get_snapshot_table_column_names() -%}
    {%- set keys = tidemark.tidemark_history_keys(config.get('unique_key')) -%}
    {%- set now = snapshot_get_time() -%}

    {{ run_hooks(pre_hooks, inside_transaction=False) }}
    {{ run_hooks(pre_hooks, inside_transaction=True) }}

    {%- if existing is none -%}
        {%- set build_sql -%}
            create table {{ this }} with (fillfactor = {{ tidemark.tidemark_history_fillfactor() }}) as (
                select
                    *,
                    {{ snapshot_hash_arguments(api.Relation.scd_args(keys, now)) }} as {{ names.dbt_scd_id }},
                    {{ now }} as {{ names.dbt_updated_at }},
                    {{ now }} as {{ names.dbt_valid_from }},
                    cast(null as timestamp without time zone) as {{ names.dbt_valid_to }}
                from ({{ sql }}) as tidemark_replica
            )
        {%- endset -%}
    {%- else -%}
        {%- set shapes = tidemark.tidemark_history_shapes(this, config.get('tidemark_replica')) -%}
        {%- if not shapes['fillfactor'] -%}
            {#- A history made before histories had a fillfactor, or given none by hand. -#}
            {% call statement() %}
                alter table {{ this }} set (fillfactor = {{ tidemark.tidemark_history_fillfactor() }})
            {% endcall %}
        {%- endif -%}
        {%- for column in shapes['missing'] -%}
            {% call statement() %}
                alter table {{ this }} add column {{ tidemark.tidemark_quote(column[0]) }} {{ column[1] }}
            {% endcall %}
        {%- endfor -%}
        {%- set build_sql = tidemark.tidemark_history_merge_sql(this, sql, keys, shapes, names, now) -%}
        {%- if shapes['changed'] is not none -%}
            {#- Emptied after each comparison and filled by the merges, the changed-keys table keeps the pages
                of its largest fill, which the planner takes for as many keys: a few thousand keys were
                planned as tens of thousands, and the whole replica and history hash-joined. -#}
            {% call statement() %}
                analyze {{ shapes['changed'] }}
            {% endcall %}
        {%- endif -%}
    {%- endif -%}

    {% call statement('main') -%}
        {{ build_sql }}
    {%- endcall %}

    {{ return(tidemark.tidemark_built(existing is not none)) }}
{%- endmaterialization %}

