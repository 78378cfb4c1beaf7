{#-
  Runs of a table that landed and are not merged yet (the view _migration.pending_runs,
  which the extract reads too). Columns: run_id, migration_type, in_batch.
-#}
{% macro tidemark_pending_runs(table_key) -%}
    select
        pending.run_id,
        pending.migration_type,
        pending.in_batch
    from _migration.pending_runs as pending
    where pending.table_key = {{ table_key }}
{%- endmacro %}
