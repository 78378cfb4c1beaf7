{#-
  The table a reconcile lands the replica `target`'s tombstones in (keys the source no
  longer holds, with the run), or none when no reconcile ever ran for it.
-#}
{% macro tidemark_tombstones(target) -%}
    {{ return(tidemark.tidemark_relation_beside(target, tidemark.tidemark_contract('tombstone_prefix'))) }}
{%- endmacro %}
