{#- The staging table the extract lands into, beside the replica (extract/naming.py). -#}
{% macro tidemark_staging_relation(relation) -%}
    {{ return(api.Relation.create(database=relation.database, schema=relation.schema, identifier='stg__' ~ relation.identifier)) }}
{%- endmacro %}
