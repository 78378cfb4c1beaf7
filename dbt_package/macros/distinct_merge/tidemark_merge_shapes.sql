{#-
  What a merge of `batch` into the replica `target` needs to know of both, in one
  query: the replica's columns (as dbt's Column, in table order), the batch's
  column names, and whether the replica holds no row. Asked under the merge lock,
  after the batch's view is made.
-#}
{% macro tidemark_merge_shapes(target, batch) -%}
    {%- set query -%}
    select
        'replica' as side,
        columns.column_name::text as column_name,
        columns.data_type::text as data_type,
        columns.character_maximum_length,
        columns.numeric_precision,
        columns.numeric_scale,
        columns.ordinal_position::int as position,
        emptiness.replica_empty
    from information_schema.columns as columns
    cross join (select not exists (select 1 from {{ target }}) as replica_empty) as emptiness
    where
        columns.table_schema = {{ tidemark.tidemark_quote_literal(target.schema) }}
        and columns.table_name = {{ tidemark.tidemark_quote_literal(target.identifier) }}

    union all

    select
        'batch' as side,
        attribute.attname::text as column_name,
        null as data_type,
        null as character_maximum_length,
        null as numeric_precision,
        null as numeric_scale,
        attribute.attnum::int as position,
        null as replica_empty
    from pg_attribute as attribute
    where
        attribute.attrelid = to_regclass({{ tidemark.tidemark_quote_literal(batch | string) }})
        and attribute.attnum > 0
        and not attribute.attisdropped

    order by side desc, position
    {%- endset -%}
    {%- set shapes = {'replica': [], 'batch': [], 'empty': none} -%}
    {%- for row in run_query(query) -%}
        {%- if row[0] == 'replica' -%}
            {%- do shapes['replica'].append(api.Column(row[1], row[2], row[3], row[4], row[5])) -%}
            {%- do shapes.update({'empty': row[7]}) -%}
        {%- else -%}
            {%- do shapes['batch'].append(row[1]) -%}
        {%- endif -%}
    {%- endfor -%}
    {{ return(shapes) }}
{%- endmacro %}
