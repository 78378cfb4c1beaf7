{#-
  Generic data test: the key columns identify every row, none NULL and none twice.
  A replica whose primary key constraint is exactly these columns has that
  guaranteed by PostgreSQL on every write: the test then reads the catalog and
  not the table (the scan sits under a one-time filter that is false, so it never
  starts), and costs the same on a billion rows as on ten. Without such a
  constraint (dropped, or a table tidemark did not create) it scans the table.
-#}
{% test tidemark_primary_key(model, key_columns) -%}
    {%- set quoted = tidemark.tidemark_quoted_names(key_columns) -%}
    with constraint_columns as (
        select array_agg(a.attname::text) as names
        from pg_constraint as c
        inner join pg_attribute as a
            on a.attrelid = c.conrelid and a.attnum = any(c.conkey)
        where
            c.conrelid = {{ tidemark.tidemark_quote_literal(model | string) }}::regclass
            and c.contype = 'p'
            and c.convalidated
    ),

    enforced as (
        select
            coalesce(
                array(select unnest(names) order by 1) = array(select unnest(expected) order by 1), false
            ) as holds
        from constraint_columns
        cross join (select array[
            {%- for name in key_columns %}
            {{ tidemark.tidemark_quote_literal(name) }}{{ "," if not loop.last }}
            {%- endfor %}
        ]::text [] as expected) as asked
    )

    select
        {{ quoted | join(', ') }},
        count(*) as occurrences
    from {{ model }}
    where not (select enforced.holds from enforced)
    group by {{ quoted | join(', ') }}
    having
        count(*) > 1
        {%- for key in quoted %}
        or {{ key }} is null
        {%- endfor %}
{%- endtest %}
