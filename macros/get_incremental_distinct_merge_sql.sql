{#- The custom incremental strategy `distinct_merge`: dbt calls this by name. -#}
{% macro get_incremental_distinct_merge_sql(arg_dict) -%}
    {{ return(adapter.dispatch('get_incremental_distinct_merge_sql', 'tidemark')(arg_dict)) }}
{%- endmacro %}
