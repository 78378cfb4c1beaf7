{% macro default__get_incremental_distinct_merge_sql(arg_dict) -%}
    {{ exceptions.raise_compiler_error(
        "the distinct_merge strategy runs on PostgreSQL only; adapter " ~ target.type ~ " is not supported"
    ) }}
{%- endmacro %}
