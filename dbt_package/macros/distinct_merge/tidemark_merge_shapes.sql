{#-
  What a merge of `batch` into the replica `target` needs to know of both, in one
  query: the replica's columns (as dbt's Column, in table order), the batch's
  column names, whether the replica holds no row, and whether PostgreSQL enforces
  its key `key_names` (see tidemark_key_enforced). Asked under the merge lock,
  after the batch's view is made. The replica's columns are described as
  information_schema.columns describes them (the same type names, lengths,
  precisions and scales, from the same functions), but read from the catalog by
  the table's oid: that view, planned and run in the new session of each node,
  took about twice as long on a schema of thousands of tables.
-#}
{% macro tidemark_merge_shapes(target, batch, key_names) -%}
    {%- set query -%}
    select
        'replica' as side,
        attribute.attname::text as column_name,
        case
            when coalesce(base.typelem, type.typelem) != 0 and coalesce(base.typlen, type.typlen) = -1 then 'ARRAY'
            when coalesce(base.typnamespace, type.typnamespace) = 'pg_catalog'::regnamespace
                then format_type(coalesce(base.oid, type.oid), null)
            else 'USER-DEFINED'
        end as data_type,
        information_schema._pg_char_max_length(
            information_schema._pg_truetypid(attribute, type), information_schema._pg_truetypmod(attribute, type)
        )::int as character_maximum_length,
        information_schema._pg_numeric_precision(
            information_schema._pg_truetypid(attribute, type), information_schema._pg_truetypmod(attribute, type)
        )::int as numeric_precision,
        information_schema._pg_numeric_scale(
            information_schema._pg_truetypid(attribute, type), information_schema._pg_truetypmod(attribute, type)
        )::int as numeric_scale,
        attribute.attnum::int as position,
        emptiness.replica_empty,
        enforcement.key_enforced
    from pg_attribute as attribute
    inner join pg_type as type on attribute.atttypid = type.oid
    left join pg_type as base on type.typtype = 'd' and type.typbasetype = base.oid
    cross join (select not exists (select 1 from {{ target }}) as replica_empty) as emptiness
    cross join ({{ tidemark.tidemark_key_enforced(target, key_names) }}) as enforcement
    where
        attribute.attrelid = to_regclass({{ tidemark.tidemark_quote_literal(target | string) }})
        and attribute.attnum > 0
        and not attribute.attisdropped

    union all

    select
        'batch' as side,
        attribute.attname::text as column_name,
        null as data_type,
        null as character_maximum_length,
        null as numeric_precision,
        null as numeric_scale,
        attribute.attnum::int as position,
        null as replica_empty,
        null as key_enforced
    from pg_attribute as attribute
    where
        attribute.attrelid = to_regclass({{ tidemark.tidemark_quote_literal(batch | string) }})
        and attribute.attnum > 0
        and not attribute.attisdropped

    order by side desc, position
    {%- endset -%}
    {%- set shapes = {'replica': [], 'batch': [], 'empty': none, 'key_enforced': false} -%}
    {%- for row in run_query(query) -%}
        {%- if row[0] == 'replica' -%}
            {%- do shapes['replica'].append(api.Column(row[1], row[2], row[3], row[4], row[5])) -%}
            {%- do shapes.update({'empty': row[7], 'key_enforced': row[8]}) -%}
        {%- else -%}
            {%- do shapes['batch'].append(row[1]) -%}
        {%- endif -%}
    {%- endfor -%}
    {{ return(shapes) }}
{%- endmacro %}
