{#-
  A Postgres quoted identifier for any name: every character taken literally, an
  embedded double quote doubled. The one quoting function for names in these
  macros (dbt's adapter.quote and Column.quoted do not double it); extract/core/quoting.py
  is the same in Python.
-#}
{% macro tidemark_quote(name) -%}
    "{{ name | replace('"', '""') }}"
{%- endmacro %}
