{#-
  The merge's entry in the state schema's merge_log: which pending runs it merged and its
  counts (SQL expressions over `from_sql`), written in the merge's own statement;
  nothing when no run was pending. Expects a CTE named pending
  (tidemark_pending_runs) in the statement.
-#}
{% macro tidemark_merge_log_insert(
    table_key, from_sql, rows_in_batch, rows_inserted, rows_updated, rows_unchanged, rows_deleted, rows_key_changed='0'
) -%}
    insert into {{ tidemark.tidemark_state_relation('merge_log') }} (
        table_key, run_ids, rows_in_batch, rows_inserted, rows_updated, rows_unchanged, rows_deleted,
        rows_key_changed, merge_started_at
    )
    select
        {{ table_key }},
        array(select pending.run_id from pending order by pending.run_id),
        {{ rows_in_batch }},
        {{ rows_inserted }},
        {{ rows_updated }},
        {{ rows_unchanged }},
        {{ rows_deleted }},
        {{ rows_key_changed }},
        now()
    from {{ from_sql }}
    where exists (select 1 from pending)
{%- endmacro %}
