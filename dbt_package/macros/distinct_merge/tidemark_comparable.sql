{#- An expression of a column that `is distinct from` can compare (xml and json have no equality). -#}
{% macro tidemark_comparable(qualifier, column) -%}
    {%- if column.data_type | lower in tidemark.tidemark_contract('uncomparable_types') -%}
        {{ qualifier }}.{{ tidemark.tidemark_quote(column.name) }}::text
    {%- else -%}
        {{ qualifier }}.{{ tidemark.tidemark_quote(column.name) }}
    {%- endif -%}
{%- endmacro %}
