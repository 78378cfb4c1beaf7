{#-
  Taken inside the merge transaction. The extract takes the same lock to mark a run
  landed, so the set of pending runs cannot change between reading the batch and
  logging the merge. Then the merge's own waits are bounded: a lock on the replica
  (a first sync's adoption renames it) for TIDEMARK_LOCK_TIMEOUT_MS, so readers never
  queue behind it for longer, and each statement for TIDEMARK_MERGE_TIMEOUT_MS (0: no
  limit), so a runaway statement fails instead of holding the merge lock for ever.
  `table_key` (SQL) names the replica when `this` is not it (its dbt snapshot).
-#}
{% macro tidemark_merge_lock(table_key=none) -%}
    {%- set lock_ms = env_var('TIDEMARK_LOCK_TIMEOUT_MS', tidemark.tidemark_contract('lock_timeout_ms') | string) -%}
    {%- set merge_ms = env_var('TIDEMARK_MERGE_TIMEOUT_MS', tidemark.tidemark_contract('merge_timeout_ms') | string) -%}
    select pg_advisory_xact_lock(hashtext({{ tidemark.tidemark_lock_key(tidemark.tidemark_contract('merge_lock_prefix'), table_key or tidemark.tidemark_table_key(this)) }}));
    select
        set_config('lock_timeout', {{ tidemark.tidemark_quote_literal((lock_ms | int) ~ 'ms') }}, true),
        set_config('statement_timeout', {{ tidemark.tidemark_quote_literal((merge_ms | int) ~ 'ms') }}, true)
{%- endmacro %}
