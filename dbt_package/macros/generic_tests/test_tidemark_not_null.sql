{#- Generic data test: the column holds no NULL (its name quoted by tidemark_quote, whatever it holds). -#}
{% test tidemark_not_null(model, column_name) -%}
    select {{ tidemark.tidemark_quote(column_name) }}
    from {{ model }}
    where {{ tidemark.tidemark_quote(column_name) }} is null
{%- endtest %}
