{#-
  One statement, one snapshot (after the key changes of a model with a record id,
  tidemark_key_change_sql): upsert the batch, touching only rows where some
  column IS DISTINCT FROM its new value; delete the keys a reconcile tombstoned
  and, after a full run, the keys the source no longer has, each logged in
  the state schema's delete_log with the run that removed it; record every key it
  changed for the dbt snapshot; log the exact counts. An empty replica takes the batch with a
  plain insert instead, or becomes a first sync's own table (tidemark_first_sync_sql). The merged staging rows stay:
  the next extract of the table clears them (a TRUNCATE, not a delete here). The
  caller (the tidemark_replica materialization) commits it in the same transaction
  as the merge lock taken by the pre-hook, after asking for the batch's column names
  and whether the replica is empty (tidemark_merge_shapes).
-#}
{% macro tidemark_distinct_merge_sql(target, source, unique_key, all_dest_columns, batch_columns, replica_empty) -%}
    {%- set dest_columns = tidemark.tidemark_replica_columns(all_dest_columns, batch_columns) -%}
    {%- set keys = tidemark.tidemark_key_columns(unique_key) -%}
    {%- set tombstones = tidemark.tidemark_tombstones(target) -%}
    {%- set all_columns = tidemark.tidemark_quoted_names(dest_columns | map(attribute='name')) | join(', ') -%}
    {%- set changing = [] -%}
    {%- for column in dest_columns -%}
        {%- if tidemark.tidemark_quote(column.name) not in keys -%}{%- do changing.append(column) -%}{%- endif -%}
    {%- endfor -%}
    {%- set table_key = tidemark.tidemark_table_key(target) -%}
    {%- set landed = tidemark.tidemark_landed_first_sync(target, table_key) -%}
    {%- if landed is not none or replica_empty -%}
        {{ return(tidemark.tidemark_first_sync_sql(target, source, dest_columns, table_key, landed)) }}
    {%- endif %}
    {%- set record = config.get('tidemark_record_id') -%}
    {%- if record %}
    {{ tidemark.tidemark_key_change_sql(target, source, keys, tidemark.tidemark_quote(record), dest_columns, table_key) }};
    {% endif %}
    {%- set unique_keys = config.get('tidemark_unique_keys') or [] -%}
    {%- if unique_keys %}
    {{ tidemark.tidemark_unique_displacement_sql(target, source, keys, unique_keys, table_key) }};
    {% endif %}
    with pending as (
        {{ tidemark.tidemark_pending_runs(table_key) }}
    ),

    batch as (
        select count(*) as rows_in_batch from {{ source }}
    ),

    {#-
      Rows equal to their replica row are left out before the upsert, so they are
      neither rewritten nor locked: no WAL, no dead tuple for an unchanged row. The
      upsert keeps its own IS DISTINCT FROM guard.
    -#}
    upserted as (
        insert into {{ target }} as dbt_internal_dest ({{ all_columns }})
        select {% for column in dest_columns %}dbt_internal_source.{{ tidemark.tidemark_quote(column.name) }}{{ ", " if not loop.last }}{% endfor %}
        from {{ source }} as dbt_internal_source
        left join {{ target }} as dbt_internal_current
            on
                {%- for key in keys %}
                dbt_internal_current.{{ key }} = dbt_internal_source.{{ key }}{{ " and" if not loop.last }}
                {%- endfor %}
        where
            dbt_internal_current.{{ keys[0] }} is null
            {%- if changing %}
            or {{ tidemark.tidemark_columns_differ('dbt_internal_current', 'dbt_internal_source', changing) }}
            {%- endif %}
        on conflict ({{ keys | join(', ') }})
        {%- if changing %}
        do update set
            {%- for column in changing %}
            {{ tidemark.tidemark_quote(column.name) }} = excluded.{{ tidemark.tidemark_quote(column.name) }}{{ "," if not loop.last }}
            {%- endfor %}
        where {{ tidemark.tidemark_columns_differ('dbt_internal_dest', 'excluded', changing) }}
        {%- else %}
        do nothing
        {%- endif %}
        returning
            {% for key in keys %}dbt_internal_dest.{{ key }}, {% endfor -%}
            (xmax = 0) as was_inserted
    ),

    {#- after a full run: every key the batch does not hold (gated by a one-time filter) -#}
    deleted_by_full_run as (
        delete from {{ target }} as dbt_internal_dest
        where
            exists (select 1 from pending where pending.in_batch and pending.migration_type = 'full')
            and not exists (
                select 1 from {{ source }} as dbt_internal_source
                where
                    {%- for key in keys %}
                    dbt_internal_source.{{ key }} = dbt_internal_dest.{{ key }}{{ " and" if not loop.last }}
                    {%- endfor %}
            )
        returning
            {% for key in keys %}dbt_internal_dest.{{ key }}, {% endfor -%}
            (select max(pending.run_id) from pending where pending.in_batch and pending.migration_type = 'full')
            as run_id
    ),
    {%- if tombstones is not none %}

    {#- a reconcile's tombstones, by key (the batch leaves out keys whose latest event is one) -#}
    deleted_by_tombstone as (
        {{ tidemark.tidemark_tombstone_delete_sql(target, source, tombstones, keys) }}
    ),
    {%- endif %}

    deleted as (
        select * from deleted_by_full_run
        {%- if tombstones is not none %}
        union all
        select * from deleted_by_tombstone
        {%- endif %}
    ),

    {#- what the replica's dbt snapshot compares, and nothing else -#}
    logged_changes as (
        {%- set changed_rows -%}
        (
            select {{ keys | join(', ') }} from upserted
            union all
            select {{ keys | join(', ') }} from deleted
        ) as changed_rows
        {%- endset %}
        {{ tidemark.tidemark_log_changed_keys(target, table_key, changed_rows, keys) }}
    ),

    logged_deletes as (
        insert into {{ tidemark.tidemark_state_relation('delete_log') }} (table_key, run_id, key)
        select
            {{ table_key }},
            deleted.run_id,
            {{ tidemark.tidemark_key_json('deleted', keys) }}
        from deleted
    ),

    counted as (
        select
            count(*) filter (where was_inserted) as rows_inserted,
            count(*) filter (where not was_inserted) as rows_updated
        from upserted
    )

    {%- set moved = "coalesce(nullif(current_setting('tidemark.keys_changed', true), ''), '0')::bigint" if record else '0' %}
    {%- set displaced = "coalesce(nullif(current_setting('tidemark.rows_displaced', true), ''), '0')::bigint" if record else '0' %}
    {%- if unique_keys %}
    {%- set displaced = displaced ~ " + coalesce(nullif(current_setting('tidemark.unique_displaced', true), ''), '0')::bigint" %}
    {%- endif %}

    {{ tidemark.tidemark_merge_log_insert(
        table_key,
        'batch cross join counted',
        'batch.rows_in_batch',
        'counted.rows_inserted',
        'counted.rows_updated',
        'batch.rows_in_batch - counted.rows_inserted - counted.rows_updated - ' ~ moved,
        '(select count(*) from deleted) + ' ~ displaced,
        moved
    ) }}
{%- endmacro %}
