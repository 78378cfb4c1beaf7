{#-
  The statement that makes the replica's next dbt snapshot compare every row: for
  a change to the replica that no changed key records (a first sync replaces it).
-#}
{% macro tidemark_rescan_sql(table_key, reason) -%}
    insert into {{ tidemark.tidemark_state_relation('history_rescans') }} (table_key, reason)
    values ({{ table_key }}, {{ tidemark.tidemark_quote_literal(reason) }})
{%- endmacro %}
