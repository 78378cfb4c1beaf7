{#-
  How a seed already in the target is loaded again. tidemark's seeds take optional
  columns (sync_tables' reader, on_schema_change...): one added to the file since the
  last load is created anew, as `dbt seed --full-refresh` would, where dbt's own load
  stops at a column the table lacks. Any other seed is loaded as dbt loads it.
-#}
{% macro postgres__reset_csv_table(model, full_refresh, old_relation, agate_table) -%}
    {%- set tidemark_seed = model.name in ('sync_tables', 'type_map', 'host_aliases') -%}
    {%- if tidemark_seed and not full_refresh -%}
        {%- set loaded = tidemark.tidemark_column_names(old_relation) | map('lower') | list -%}
        {%- set given = agate_table.column_names | map('lower') | list -%}
        {%- if loaded != given -%}
            {{ return(dbt.default__reset_csv_table(model, true, old_relation, agate_table)) }}
        {%- endif -%}
    {%- endif -%}
    {{ return(dbt.default__reset_csv_table(model, full_refresh, old_relation, agate_table)) }}
{%- endmacro %}
