{#-
  The statement of a history run (tidemark_history): what dbt's check snapshot
  with invalidated hard deletes does, in one snapshot of the database. A current
  version whose replica row is gone, or differs in a checked column, is closed;
  a replica row with no current version, or a changed one, becomes a new current
  version. Only the keys in `shapes.changed` are compared, or every row when it
  is none (tidemark_history_shapes). A checked column the history lacked makes
  every compared row a new version, as in dbt's snapshot. `keys`: quoted names.
-#}
{% macro tidemark_history_merge_sql(history, source_sql, keys, shapes, names, now) -%}
    {%- set checked = config.get('check_cols') -%}
    {%- set checked = shapes['replica'] if checked == 'all' else tidemark.tidemark_unquoted_names(checked) -%}
    {%- set added = checked | reject('in', shapes['history']) | list -%}
    {%- set compared = tidemark.tidemark_quoted_names(checked | select('in', shapes['history']) | list) -%}
    {%- set changed = shapes['changed'] -%}
    {%- set columns = tidemark.tidemark_quoted_names(shapes['replica']) -%}
    {%- set qualified = [] -%}
    {%- for key in keys -%}{%- do qualified.append('replica_row.' ~ key) -%}{%- endfor -%}
    {%- set scd_id = snapshot_hash_arguments(api.Relation.scd_args(qualified, now)) -%}
    {%- set row_changed -%}
        {%- if added %}true{% elif not compared %}false{% else %}(
            {%- for column in compared %}
            current_version.{{ column }} is distinct from replica_row.{{ column }}{{ " or" if not loop.last }}
            {%- endfor %}
        ){%- endif -%}
    {%- endset -%}
    {%- set same_key -%}
        {%- for key in keys %}current_version.{{ key }} = replica_row.{{ key }}{{ " and " if not loop.last }}{% endfor -%}
    {%- endset %}
    with replica_rows as (
        select * from ({{ source_sql }}) as tidemark_replica
        {%- if changed is not none %}
        where {{ tidemark.tidemark_changed_key(changed, 'tidemark_replica', keys) }}
        {%- endif %}
    ),

    {#- The current versions with their row address (ctid): the update closes each by its address, found
        in the same statement, with no index to keep beside the one by key. A column cannot be named ctid,
        so the name is free. -#}
    current_versions as (
        select tidemark_history.ctid, tidemark_history.* from {{ history }} as tidemark_history
        where
            tidemark_history.{{ names.dbt_valid_to }} is null
            {%- if changed is not none %}
            and {{ tidemark.tidemark_changed_key(changed, 'tidemark_history', keys) }}
            {%- endif %}
    ),

    closed as (
        update {{ history }} as tidemark_history
        set {{ names.dbt_valid_to }} = {{ now }}
        from current_versions as current_version
        left join replica_rows as replica_row on {{ same_key }}
        where
            tidemark_history.ctid = current_version.ctid
            and (replica_row.{{ keys[0] }} is null or {{ row_changed }})
        returning 1
    )

    insert into {{ history }} (
        {{ columns | join(', ') }},
        {{ names.dbt_scd_id }}, {{ names.dbt_updated_at }}, {{ names.dbt_valid_from }}, {{ names.dbt_valid_to }}
    )
    select
        {% for column in columns %}replica_row.{{ column }}, {% endfor %}
        {{ scd_id }},
        {{ now }},
        {{ now }},
        cast(null as timestamp without time zone)
    from replica_rows as replica_row
    left join current_versions as current_version on {{ same_key }}
    where current_version.{{ keys[0] }} is null or {{ row_changed }}
{%- endmacro %}
