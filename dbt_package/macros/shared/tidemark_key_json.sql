{#-
  A key as a JSON object (column name: value) for the logs: `keys` are the key's quoted
  names; the values are read from row `alias`, in the columns `columns` (quoted, in key
  order) when given, else in the key's own columns.
-#}
{% macro tidemark_key_json(alias, keys, columns=none) -%}
    {%- set values = columns if columns is not none else keys -%}
    jsonb_build_object(
        {%- for key in keys %}
        {{ tidemark.tidemark_quote_literal(key[1:-1] | replace('""', '"')) }}, {{ alias }}.{{ values[loop.index0] }}{{ "," if not loop.last }}
        {%- endfor %}
    )
{%- endmacro %}
