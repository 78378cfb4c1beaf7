{#-
  dbt's incremental materialization copies a model's rows into a temporary
  table before the merge. A replica's batch is read by the one merge statement,
  in the transaction that holds the merge lock, so a temporary view serves as
  well and the staged rows are not copied once more (on a full sync of
  10,000,000 rows, seconds). Models opt in with tmp_relation_type='view' (the
  replicas, in dbt_project.yml); every other temporary relation stays a table.
-#}
{% macro postgres__get_create_table_as_sql(temporary, relation, sql) -%}
    {%- if temporary and config.get('tmp_relation_type') == 'view' -%}
        create temporary view {{ relation }} as (
            {{ sql }}
        )
    {%- else -%}
        {{ create_table_as(temporary, relation, sql) }}
    {%- endif -%}
{%- endmacro %}
