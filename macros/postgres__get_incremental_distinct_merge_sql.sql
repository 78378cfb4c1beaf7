{% macro postgres__get_incremental_distinct_merge_sql(arg_dict) -%}
    {{ return(tidemark_distinct_merge_sql(
        arg_dict["target_relation"],
        arg_dict["temp_relation"],
        arg_dict["unique_key"],
        arg_dict["dest_columns"],
    )) }}
{%- endmacro %}
