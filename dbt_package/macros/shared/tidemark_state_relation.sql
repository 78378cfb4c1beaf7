{#- A relation (table, view or function) of the state schema, schema-qualified and quoted. -#}
{% macro tidemark_state_relation(name) -%}
    {{ return(tidemark.tidemark_quote(tidemark.tidemark_state_schema()) ~ '.' ~ tidemark.tidemark_quote(name)) }}
{%- endmacro %}
