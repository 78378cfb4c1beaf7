{#-
  The column names of a relation, asked at run time (none while dbt only parses): for a
  seed whose optional columns a user may leave out, such as sync_tables' enabled.
-#}
{% macro tidemark_column_names(relation) -%}
    {%- if not execute -%}{{ return([]) }}{%- endif -%}
    {{ return(adapter.get_columns_in_relation(relation) | map(attribute='name') | list) }}
{%- endmacro %}
