{#- Generic data test: no value of the column appears twice (its name quoted by tidemark_quote). -#}
{% test tidemark_unique(model, column_name) -%}
    select
        {{ tidemark.tidemark_quote(column_name) }} as unique_field,
        count(*) as occurrences
    from {{ model }}
    where {{ tidemark.tidemark_quote(column_name) }} is not null
    group by {{ tidemark.tidemark_quote(column_name) }}
    having count(*) > 1
{%- endtest %}
