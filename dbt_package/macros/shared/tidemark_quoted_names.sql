{#- A list of names as quoted identifiers (tidemark_quote each). -#}
{% macro tidemark_quoted_names(names) -%}
    {%- set quoted = [] -%}
    {%- for name in names -%}
        {%- do quoted.append(tidemark.tidemark_quote(name)) -%}
    {%- endfor -%}
    {{ return(quoted) }}
{%- endmacro %}
