{#-
  The body of a data-modifying CTE of a merge statement: the keys of `rows` (a
  from-item whose columns `keys` are the replica's quoted key names) go into the
  replica's changed-keys table, for its dbt snapshot to compare those rows and no
  other. Without that table (a replica the extract has not prepared since it
  started recording keys), the merge asks the next snapshot to compare every row.
  Run under the merge lock, as the snapshot reads and empties the table.
-#}
{% macro tidemark_log_changed_keys(target, table_key, rows, keys) -%}
    {%- set changed = tidemark.tidemark_changed_keys(target) -%}
    {%- if changed is not none %}
    insert into {{ changed }} ({{ keys | join(', ') }})
    select {{ keys | join(', ') }} from {{ rows }}
    on conflict do nothing
    {%- else %}
    insert into {{ tidemark.tidemark_state_relation('history_rescans') }} (table_key, reason)
    select {{ table_key }}, 'changed keys not recorded'
    where exists (select 1 from {{ rows }})
    {%- endif %}
    returning 1
{%- endmacro %}
