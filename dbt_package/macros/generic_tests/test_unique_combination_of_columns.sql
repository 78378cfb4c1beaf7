{#- Generic data test: no two rows share the combination (composite primary keys). -#}
{% test unique_combination_of_columns(model, combination_of_columns) -%}
    {%- set quoted = tidemark.tidemark_quoted_names(combination_of_columns) -%}
    select
        {{ quoted | join(', ') }},
        count(*) as occurrences
    from {{ model }}
    group by {{ quoted | join(', ') }}
    having count(*) > 1
{%- endtest %}
