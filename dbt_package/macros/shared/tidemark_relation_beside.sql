{#-
  The table tidemark keeps beside the replica `target` under `prefix` and
  `suffix` (its tombstones, its changed keys, its history), or none when it does
  not exist, or while dbt only parses.
-#}
{% macro tidemark_relation_beside(target, prefix, suffix='') -%}
    {%- if not execute -%}{{ return(none) }}{%- endif -%}
    {%- set beside = api.Relation.create(
        database=target.database, schema=target.schema, identifier=prefix ~ target.identifier ~ suffix
    ) -%}
    {{ return(tidemark.tidemark_relations_beside(target, [beside])[beside | string]) }}
{%- endmacro %}
