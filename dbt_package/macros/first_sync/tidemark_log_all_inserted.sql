{#-
  The merge log entry of a merge into an empty replica: every row the replica
  holds afterwards counted inserted (counted in the table, not returned by the
  statement that wrote them: a returned row is kept until the statement ends).
  No key records so many changes: the dbt snapshot compares every row next.
-#}
{% macro tidemark_log_all_inserted(target, table_key) -%}
    {{ tidemark.tidemark_rescan_sql(table_key, 'first sync') }};
    with pending as (
        {{ tidemark.tidemark_pending_runs(table_key) }}
    ),

    counted as (
        select count(*) as rows_inserted from {{ target }}
    )

    {{ tidemark.tidemark_merge_log_insert(
        table_key, 'counted', 'counted.rows_inserted', 'counted.rows_inserted', '0', '0', '0'
    ) }}
{%- endmacro %}
