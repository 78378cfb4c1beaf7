{#-
  Replica and state schemas are named exactly, not prefixed with the target schema. dbt's
  generate_schema_name dispatches here when the project's dispatch search order for the dbt
  namespace puts tidemark before dbt (tidemark init checks it does).
-#}
{% macro default__generate_schema_name(custom_schema_name, node) -%}
    {%- if custom_schema_name is none -%}
        {{ target.schema }}
    {%- else -%}
        {{ custom_schema_name | trim }}
    {%- endif -%}
{%- endmacro %}
