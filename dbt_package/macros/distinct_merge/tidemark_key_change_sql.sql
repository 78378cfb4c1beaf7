{#-
  The statement that runs before the upsert when the model has a record id (the
  seed's record_id, config tidemark_record_id): each replica row whose record the
  batch holds under another key moves to that key, with the batch's values, so the
  upsert then finds it in place and equal.

  The rows that move, and any row that holds a key one of them takes, are deleted
  and inserted again in this one statement. A row deleted by the statement no
  longer holds its key, so swaps (A to B and B to A) and longer cycles apply, which
  an UPDATE could not do under the non-deferrable primary key that ON CONFLICT
  needs. The insert waits for the delete through its one-time filter.

  A moved row's versions in the dbt snapshot take its new key, so its history
  follows it. Each move is logged in the state schema's key_change_log; a row pushed off a
  key by another record is deleted and logged in its delete_log. The counts
  reach the upsert's merge_log entry through transaction-local settings
  (tidemark.keys_changed, tidemark.rows_displaced).
-#}
{% macro tidemark_key_change_sql(target, source, keys, record, dest_columns, table_key) -%}
    {%- set run_id = tidemark.tidemark_quote(tidemark.tidemark_contract('run_id_column')) -%}
    {%- set all_columns = tidemark.tidemark_quoted_names(dest_columns | map(attribute='name')) | join(', ') -%}
    {%- set old_keys, new_keys = [], [] -%}
    {%- for key in keys -%}
        {%- do old_keys.append(tidemark.tidemark_quote('old_key_' ~ loop.index)) -%}
        {%- do new_keys.append(tidemark.tidemark_quote('new_key_' ~ loop.index)) -%}
    {%- endfor -%}
    {%- set history = tidemark.tidemark_relation_beside(target, '', tidemark.tidemark_contract('history_suffix')) -%}
    with moves as (
        select
            {%- for key in keys %}
            dbt_internal_current.{{ key }} as {{ old_keys[loop.index0] }},
            dbt_internal_source.{{ key }} as {{ new_keys[loop.index0] }},
            {%- endfor %}
            dbt_internal_source.{{ record }} as record_id,
            dbt_internal_source.{{ run_id }} as run_id
        from {{ source }} as dbt_internal_source
        inner join {{ target }} as dbt_internal_current
            on dbt_internal_current.{{ record }} = dbt_internal_source.{{ record }}
        where
            ({% for key in keys %}dbt_internal_current.{{ key }}{{ ", " if not loop.last }}{% endfor %})
            is distinct from
            ({% for key in keys %}dbt_internal_source.{{ key }}{{ ", " if not loop.last }}{% endfor %})
    ),

    moved_out as (
        delete from {{ target }} as dbt_internal_dest
        using moves
        where
            ({% for key in keys %}dbt_internal_dest.{{ key }}{{ ", " if not loop.last }}{% endfor %})
            = ({{ old_keys | join(', ') }})
            or ({% for key in keys %}dbt_internal_dest.{{ key }}{{ ", " if not loop.last }}{% endfor %})
            = ({{ new_keys | join(', ') }})
        returning
            {% for key in keys %}dbt_internal_dest.{{ key }}, {% endfor -%}
            dbt_internal_dest.{{ record }} as record_id,
            moves.run_id
    ),

    displaced as (
        select moved_out.*
        from moved_out
        where not exists (select 1 from moves where moves.record_id = moved_out.record_id)
    ),

    moved_in as (
        insert into {{ target }} ({{ all_columns }})
        select {% for column in dest_columns %}dbt_internal_source.{{ tidemark.tidemark_quote(column.name) }}{{ ", " if not loop.last }}{% endfor %}
        from {{ source }} as dbt_internal_source
        inner join moves
            on ({% for key in keys %}dbt_internal_source.{{ key }}{{ ", " if not loop.last }}{% endfor %})
            = ({{ new_keys | join(', ') }})
        where (select count(*) from moved_out) >= 0
        returning 1
    ),
    {%- if history is not none %}

    history_moved as (
        update {{ history }} as dbt_internal_history
        set
            {%- for key in keys %}
            {{ key }} = moves.{{ new_keys[loop.index0] }}{{ "," if not loop.last }}
            {%- endfor %}
        from moves
        where
            ({% for key in keys %}dbt_internal_history.{{ key }}{{ ", " if not loop.last }}{% endfor %})
            = ({{ old_keys | join(', ') }})
        returning 1
    ),
    {%- endif %}

    logged_changes as (
        {%- set changed_rows -%}
        (
            select {{ keys | join(', ') }} from moved_out
            union all
            select {% for key in keys %}{{ new_keys[loop.index0] }} as {{ key }}{{ ", " if not loop.last }}{% endfor %}
            from moves
        ) as changed_rows
        {%- endset %}
        {{ tidemark.tidemark_log_changed_keys(target, table_key, changed_rows, keys) }}
    ),

    logged_moves as (
        insert into {{ tidemark.tidemark_state_relation('key_change_log') }} (table_key, run_id, old_key, new_key)
        select
            {{ table_key }},
            moves.run_id,
            {{ tidemark.tidemark_key_json('moves', keys, old_keys) }},
            {{ tidemark.tidemark_key_json('moves', keys, new_keys) }}
        from moves
        returning 1
    ),

    logged_displaced as (
        insert into {{ tidemark.tidemark_state_relation('delete_log') }} (table_key, run_id, key)
        select {{ table_key }}, displaced.run_id, {{ tidemark.tidemark_key_json('displaced', keys) }}
        from displaced
        returning 1
    )

    select
        set_config('tidemark.keys_changed', (select count(*) from moved_in)::text, true),
        set_config('tidemark.rows_displaced', (select count(*) from logged_displaced)::text, true)
        {%- if history is not none %},
        (select count(*) from history_moved) as history_rows_moved
        {%- endif %}
{%- endmacro %}
