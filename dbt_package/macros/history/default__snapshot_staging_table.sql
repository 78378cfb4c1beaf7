{#-
  dbt's snapshot staging (what changed since the history's current versions),
  restricted for a replica's history to the keys its merges changed since the
  snapshot last ran: the replica's rows of those keys against the history's
  current versions of those keys. dbt's own macro computes inserts, updates and
  hard deletes from them as from whole tables, so the history is what a full
  snapshot makes; its cost follows the keys changed, not the rows held. Any other
  snapshot, or one that must compare every row (tidemark_history_changes), is dbt's
  as it is. (dbt dispatches to this through the project's search order.)
-#}
{% macro default__snapshot_staging_table(strategy, source_sql, target_relation) -%}
    {#- dbt's snapshot asks for its staging twice (to check its types, to build it): the changed
        keys are looked up once per node, kept in the node's own context (`model`). -#}
    {%- if 'tidemark_history_changes' not in model -%}
        {%- do model.update({'tidemark_history_changes': tidemark.tidemark_history_changes(config.get('tidemark_replica'))}) -%}
    {%- endif -%}
    {%- set changed = model['tidemark_history_changes'] -%}
    {%- if changed is none -%}
        {{ return(dbt.default__snapshot_staging_table(strategy, source_sql, target_relation)) }}
    {%- endif -%}
    {%- set keys = strategy.unique_key if strategy.unique_key is not string else [strategy.unique_key] -%}
    {%- set changed_replica -%}
        select * from ({{ source_sql }}) as tidemark_replica
        where {{ tidemark.tidemark_changed_key(changed, 'tidemark_replica', keys) }}
    {%- endset -%}
    {%- set changed_history -%}
        (
            select * from {{ target_relation }} as tidemark_history
            where {{ tidemark.tidemark_changed_key(changed, 'tidemark_history', keys) }}
        ) as tidemark_current
    {%- endset -%}
    {{ return(dbt.default__snapshot_staging_table(strategy, changed_replica, changed_history)) }}
{%- endmacro %}
