{#-
  Runs of a table that landed and are not merged yet (the state schema's view pending_runs,
  which the extract reads too). Columns: run_id, migration_type, in_batch.
-#}
{% macro tidemark_pending_runs(table_key) -%}
    select
        pending.run_id,
        pending.migration_type,
        pending.in_batch
    from {{ tidemark.tidemark_state_relation('pending_runs') }} as pending
    where pending.table_key = {{ table_key }}
{%- endmacro %}
