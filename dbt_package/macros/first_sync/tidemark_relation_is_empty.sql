{#-
  Whether a relation holds no row, asked at run time (false while dbt only parses).
  Called inside the merge transaction, after the merge lock: nothing else writes
  the replica until it commits.
-#}
{% macro tidemark_relation_is_empty(relation) -%}
    {%- if not execute -%}{{ return(false) }}{%- endif -%}
    {%- set found = run_query("select exists (select 1 from " ~ relation ~ ")") -%}
    {{ return(not found.columns[0].values()[0]) }}
{%- endmacro %}
