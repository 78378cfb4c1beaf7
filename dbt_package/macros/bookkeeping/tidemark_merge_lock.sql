{#-
  Taken inside the merge transaction. The extract takes the same lock to mark a run
  landed, so the set of pending runs cannot change between reading the batch and
  logging the merge.
-#}
{% macro tidemark_merge_lock() -%}
    select pg_advisory_xact_lock(hashtext({{ tidemark.tidemark_quote_literal(tidemark.tidemark_contract('merge_lock_prefix')) }} || {{ tidemark.tidemark_table_key(this) }}))
{%- endmacro %}
