{#-
  The replica's columns a merge writes from its batch: those the batch holds, less the
  key and row hashes Postgres generates in a replica that kept them for reconcile in an
  earlier version (its next reconcile drops them: extract/reconcile/replica_side.py).
  A column the source dropped stays in a replica whose on_schema_change is
  append_new_columns, with the values it had: the batch does not hold it.
  `landed`: the batch's column names.
-#}
{% macro tidemark_replica_columns(columns, landed) -%}
    {%- set generated = [tidemark.tidemark_contract('key_hash_column'), tidemark.tidemark_contract('row_hash_column')] -%}
    {%- set own = [] -%}
    {%- for column in columns -%}
        {%- if column.name not in generated and column.name in landed -%}{%- do own.append(column) -%}{%- endif -%}
    {%- endfor -%}
    {{ return(own) }}
{%- endmacro %}
