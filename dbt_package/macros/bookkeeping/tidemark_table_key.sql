{#- The replica's identity in the state logs; extract/config/naming.py computes the same. -#}
{% macro tidemark_table_key(relation) -%}
    {{ tidemark.tidemark_quote_literal(relation.schema ~ '.' ~ relation.identifier) }}
{%- endmacro %}
