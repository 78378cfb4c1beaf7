{#- Generic data test: no two rows share the combination (composite primary keys). -#}
{% test unique_combination_of_columns(model, combination_of_columns) -%}
    {%- set quoted = [] -%}
    {%- for column in combination_of_columns -%}
        {%- do quoted.append(adapter.quote(column)) -%}
    {%- endfor -%}
    select
        {{ quoted | join(', ') }},
        count(*) as occurrences
    from {{ model }}
    group by {{ quoted | join(', ') }}
    having count(*) > 1
{%- endtest %}
