{#-
  The pre-hook of a replica's dbt snapshot: its replica's merge lock, for the
  snapshot's transaction. No merge changes the replica, or records a changed key,
  between the snapshot's reading them and its emptying the changed keys.
-#}
{% macro tidemark_history_lock() -%}
    {%- if not execute -%}{{ return('') }}{%- endif -%}
    {%- set replica = config.get('tidemark_replica') -%}
    {{ tidemark.tidemark_merge_lock(tidemark.tidemark_quote_literal(replica[0] ~ '.' ~ replica[1])) }}
{%- endmacro %}
