{#- A SQL string literal for a name dbt already knows (schema.table); quotes doubled. -#}
{% macro tidemark_quote_literal(value) -%}
    '{{ value | replace("'", "''") }}'
{%- endmacro %}
