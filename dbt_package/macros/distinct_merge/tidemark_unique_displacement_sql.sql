{#-
  The statement that runs before the upsert when the model carries the source's
  alternate unique keys (the seed's unique_keys, config tidemark_unique_keys):
  each replica row that holds a unique value the batch gives a row of another
  key, and whose own key the batch does not hold, is deleted and logged in
  the state schema's delete_log. The source's own constraint says no other row holds
  that value now, so the replica row is stale: deleted in the source (which no
  cursor announces) or changed without its cursor moving (a reconcile brings it
  back). Without this, such a row would fail the merge at commit on the
  replica's deferred unique constraint, and every merge after it.

  Rows whose key the batch holds are left to the upsert: values swapped between
  them are checked when the transaction commits. The count reaches the upsert's
  merge_log entry through a transaction-local setting (tidemark.unique_displaced).
-#}
{% macro tidemark_unique_displacement_sql(target, source, keys, unique_keys, table_key) -%}
    {%- set run_id = tidemark.tidemark_quote(tidemark.tidemark_contract('run_id_column')) -%}
    with displaced as (
        delete from {{ target }} as dbt_internal_dest
        using {{ source }} as dbt_internal_source
        where
            (
                {%- for unique in unique_keys %}
                ({% for column in unique %}dbt_internal_dest.{{ tidemark.tidemark_quote(column) }}{{ ", " if not loop.last }}{% endfor %})
                = ({% for column in unique %}dbt_internal_source.{{ tidemark.tidemark_quote(column) }}{{ ", " if not loop.last }}{% endfor %})
                {{- " or" if not loop.last }}
                {%- endfor %}
            )
            and not exists (
                select 1 from {{ source }} as dbt_internal_batch
                where
                    {%- for key in keys %}
                    dbt_internal_batch.{{ key }} = dbt_internal_dest.{{ key }}{{ " and" if not loop.last }}
                    {%- endfor %}
            )
        returning
            {% for key in keys %}dbt_internal_dest.{{ key }}, {% endfor -%}
            dbt_internal_source.{{ run_id }} as run_id
    ),

    logged_changes as (
        {{ tidemark.tidemark_log_changed_keys(target, table_key, 'displaced', keys) }}
    ),

    logged as (
        insert into {{ tidemark.tidemark_state_relation('delete_log') }} (table_key, run_id, key)
        select {{ table_key }}, displaced.run_id, {{ tidemark.tidemark_key_json('displaced', keys) }}
        from displaced
        returning 1
    )

    select set_config('tidemark.unique_displaced', (select count(*) from logged)::text, true)
{%- endmacro %}
