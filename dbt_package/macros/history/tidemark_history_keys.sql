{#- A history's unique_key as the list of quoted names it is configured with (the generated files quote them). -#}
{% macro tidemark_history_keys(unique_key) -%}
    {%- if not unique_key -%}
        {{ exceptions.raise_compiler_error("snapshot " ~ this ~ " needs a unique_key: write it again with `tidemark generate`") }}
    {%- endif -%}
    {{ return([unique_key] if unique_key is string else unique_key) }}
{%- endmacro %}
