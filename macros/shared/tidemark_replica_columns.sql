{#-
  A replica's own columns among `columns`: without the key and row hashes that
  Postgres generates for reconcile (extract/reconcile/hashes.py), which no merge writes.
-#}
{% macro tidemark_replica_columns(columns) -%}
    {%- set generated = [var('tidemark_key_hash_column'), var('tidemark_row_hash_column')] -%}
    {%- set own = [] -%}
    {%- for column in columns -%}
        {%- if column.name not in generated -%}{%- do own.append(column) -%}{%- endif -%}
    {%- endfor -%}
    {{ return(own) }}
{%- endmacro %}
