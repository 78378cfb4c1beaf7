{#-
  The text an advisory lock's key is hashed from, as SQL: the prefix and the table key (a SQL
  expression) for the default state schema, as before tenants; for another, the lock scope mark and
  the schema's name after them, so that projects sharing a target never wait on each other's locks.
  extract/core/state_schema.py (lock_key) is the same in Python.
-#}
{% macro tidemark_lock_key(prefix, table_key) -%}
    {%- set schema = tidemark.tidemark_state_schema() -%}
    {{ tidemark.tidemark_quote_literal(prefix) }} || {{ table_key }}
    {%- if schema != tidemark.tidemark_contract('default_state_schema') %} || {{ tidemark.tidemark_quote_literal(tidemark.tidemark_contract('lock_scope_mark') ~ schema) }}{% endif %}
{%- endmacro %}
