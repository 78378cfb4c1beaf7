{#-
  The table tidemark keeps beside the replica `target` under `prefix` (its
  tombstones, its changed keys), or none when it does not exist, or while dbt
  only parses.
-#}
{% macro tidemark_relation_beside(target, prefix) -%}
    {%- if not execute -%}{{ return(none) }}{%- endif -%}
    {{ return(adapter.get_relation(
        database=target.database,
        schema=target.schema,
        identifier=prefix ~ target.identifier,
    )) }}
{%- endmacro %}
