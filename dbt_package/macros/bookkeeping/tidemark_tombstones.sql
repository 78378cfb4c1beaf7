{#-
  The table a reconcile lands the replica `target`'s tombstones in (keys the source no
  longer holds, with the run), or none when no reconcile ever ran for it.
-#}
{% macro tidemark_tombstones(target) -%}
    {%- if not execute -%}{{ return(none) }}{%- endif -%}
    {{ return(adapter.get_relation(
        database=target.database,
        schema=target.schema,
        identifier=tidemark.tidemark_contract('tombstone_prefix') ~ target.identifier,
    )) }}
{%- endmacro %}
