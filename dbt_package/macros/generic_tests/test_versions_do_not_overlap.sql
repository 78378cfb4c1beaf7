{#- Generic data test: no two versions of a key in an SCD2 history cover the same date. -#}
{% test versions_do_not_overlap(model, key_columns) -%}
    {%- set quoted = tidemark.tidemark_quoted_names(key_columns) -%}
    select
        {% for key in quoted %}earlier.{{ key }}, {% endfor %}
        earlier.valid_from,
        earlier.valid_to,
        later.valid_from as next_valid_from
    from {{ model }} as earlier
    inner join {{ model }} as later
        on
            {% for key in quoted %}earlier.{{ key }} = later.{{ key }} and {% endfor -%}
            earlier.valid_from < later.valid_from
    where earlier.valid_to is null or earlier.valid_to > later.valid_from
{%- endtest %}
