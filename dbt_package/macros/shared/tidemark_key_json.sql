{#-
  A key as the logs keep it: a JSON object (column name: value), through the state schema's
  tidemark_protect_json, which encrypts it where a state key protects the schema (see
  extract/state/protection.py). `keys` are the key's quoted names; the values are read from row
  `alias`, in the columns `columns` (quoted, in key order) when given, else in the key's own columns.
-#}
{% macro tidemark_key_json(alias, keys, columns=none) -%}
    {%- set values = columns if columns is not none else keys -%}
    {{ tidemark.tidemark_state_relation('tidemark_protect_json') }}(jsonb_build_object(
        {%- for key in keys %}
        {{ tidemark.tidemark_quote_literal(key[1:-1] | replace('""', '"')) }}, {{ alias }}.{{ values[loop.index0] }}{{ "," if not loop.last }}
        {%- endfor %}
    ))
{%- endmacro %}
