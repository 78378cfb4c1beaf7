{#-
  The custom incremental strategy `distinct_merge`: dbt calls the public macro by
  name, and it dispatches to the adapter's implementation.
-#}
{% macro get_incremental_distinct_merge_sql(arg_dict) -%}
    {{ return(adapter.dispatch('get_incremental_distinct_merge_sql', 'tidemark')(arg_dict)) }}
{%- endmacro %}

{% macro default__get_incremental_distinct_merge_sql(arg_dict) -%}
    {{ exceptions.raise_compiler_error(
        "the distinct_merge strategy runs on PostgreSQL only; adapter " ~ target.type ~ " is not supported"
    ) }}
{%- endmacro %}

{% macro postgres__get_incremental_distinct_merge_sql(arg_dict) -%}
    {{ return(tidemark.tidemark_distinct_merge_sql(
        arg_dict["target_relation"],
        arg_dict["temp_relation"],
        arg_dict["unique_key"],
        arg_dict["dest_columns"],
    )) }}
{%- endmacro %}
