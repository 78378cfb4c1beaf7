{#-
  Runs of a table that landed and are not merged yet. A full run supersedes the
  runs before it: those are marked merged with it but their rows stay out of the
  batch (in_batch is false). Columns: run_id, migration_type, in_batch.
-#}
{% macro tidemark_pending_runs(table_key) -%}
    select
        u.run_id,
        u.migration_type,
        u.run_id >= coalesce(max(u.run_id) filter (where u.migration_type = 'full') over (), 0) as in_batch
    from _migration.run_log as u
    where
        u.table_key = {{ table_key }}
        and u.status = 'landed'
        and not exists (
            select 1 from _migration.merge_log as m
            where m.table_key = u.table_key and u.run_id = any(m.run_ids)
        )
{%- endmacro %}
