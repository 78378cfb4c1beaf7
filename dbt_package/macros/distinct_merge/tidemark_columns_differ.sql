{#- `(left.c1, ...) is distinct from (right.c1, ...)` over `columns`: true when some value differs, NULLs equal. -#}
{% macro tidemark_columns_differ(left, right, columns) -%}
    (
        {%- for column in columns %}
        {{ tidemark.tidemark_comparable(left, column) }}{{ "," if not loop.last }}
        {%- endfor %}
    ) is distinct from (
        {%- for column in columns %}
        {{ tidemark.tidemark_comparable(right, column) }}{{ "," if not loop.last }}
        {%- endfor %}
    )
{%- endmacro %}
