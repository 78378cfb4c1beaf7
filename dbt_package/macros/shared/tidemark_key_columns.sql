{#- unique_key as a list of quoted column names, whether configured as a string or a list. -#}
{% macro tidemark_key_columns(unique_key) -%}
    {%- if unique_key is none or unique_key | length == 0 -%}
        {#- Configs are not resolved while dbt parses; only a run can tell it is missing. -#}
        {%- if execute -%}
            {{ exceptions.raise_compiler_error("model " ~ this ~ " needs a unique_key for distinct_merge") }}
        {%- endif -%}
        {{ return(['__unresolved__']) }}
    {%- endif -%}
    {%- set keys = [unique_key] if unique_key is string else unique_key -%}
    {{ return(tidemark.tidemark_quoted_names(keys)) }}
{%- endmacro %}
