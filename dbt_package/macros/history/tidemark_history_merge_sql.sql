{#-
  The statement of a history run (tidemark_history): what dbt's check snapshot
  with invalidated hard deletes does, in one snapshot of the database. A current
  version whose replica row is gone, or differs in a checked column, is closed;
  a replica row with no current version, or a changed one, becomes a new current
  version. Only the keys in `shapes.changed` are compared, or every row when it
  is none (tidemark_history_shapes). A checked column the history lacked makes
  every compared row a new version, as in dbt's snapshot. `keys`: quoted names.

  Each compared key is looked up once in the replica and once among the current
  versions, in one join whose outcome both the update and the insert read: the
  closing update finds its version by row address (ctid), so the history keeps no
  index but the one of current versions by key.
-#}
{% macro tidemark_history_merge_sql(history, source_sql, keys, shapes, names, now) -%}
    {%- set checked = config.get('check_cols') -%}
    {%- set checked = shapes['replica'] if checked == 'all' else tidemark.tidemark_unquoted_names(checked) -%}
    {%- set added = checked | reject('in', shapes['history']) | list -%}
    {%- set compared = tidemark.tidemark_quoted_names(checked | select('in', shapes['history']) | list) -%}
    {%- set changed = shapes['changed'] -%}
    {%- set columns = tidemark.tidemark_quoted_names(shapes['replica']) -%}
    {#- A source column cannot have the prefix _tidemark_ (extract/config/naming.py). -#}
    {%- set outcome = '_tidemark_outcome' -%}
    {%- set qualified = [] -%}
    {%- for key in keys -%}{%- do qualified.append('compared.' ~ key) -%}{%- endfor -%}
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
    {#- The outcome of each compared key: 1 its current version is closed (the replica row is gone), 2 closed
        and followed by a new version (changed), 3 a first version (new). Equal rows are left out. -#}
    with compared as (
        select * from (
            select
                current_version.ctid,
                {% for column in columns %}replica_row.{{ column }}, {% endfor %}
                case
                    when current_version.{{ keys[0] }} is null
                        then case when replica_row.{{ keys[0] }} is null then 0 else 3 end
                    when replica_row.{{ keys[0] }} is null then 1
                    when {{ row_changed }} then 2
                    else 0
                end as {{ outcome }}
            {%- if changed is not none %}
            from {{ changed }} as tidemark_changed
            left join ({{ source_sql }}) as replica_row
                on
                    {%- for key in keys %}
                    replica_row.{{ key }} = tidemark_changed.{{ key }}{{ " and" if not loop.last }}
                    {%- endfor %}
            left join {{ history }} as current_version
                on
                    {%- for key in keys %}
                    current_version.{{ key }} = tidemark_changed.{{ key }} and
                    {%- endfor %}
                    current_version.{{ names.dbt_valid_to }} is null
            {%- else %}
            from ({{ source_sql }}) as replica_row
            full join (
                select tidemark_history.ctid, tidemark_history.* from {{ history }} as tidemark_history
                where tidemark_history.{{ names.dbt_valid_to }} is null
            ) as current_version on {{ same_key }}
            {%- endif %}
        ) as outcomes
        where {{ outcome }} > 0
    ),

    closed as (
        update {{ history }} as tidemark_history
        set {{ names.dbt_valid_to }} = {{ now }}
        from compared
        where tidemark_history.ctid = compared.ctid and compared.{{ outcome }} in (1, 2)
        returning 1
    )

    insert into {{ history }} (
        {{ columns | join(', ') }},
        {{ names.dbt_scd_id }}, {{ names.dbt_updated_at }}, {{ names.dbt_valid_from }}, {{ names.dbt_valid_to }}
    )
    select
        {% for column in columns %}compared.{{ column }}, {% endfor %}
        {{ scd_id }},
        {{ now }},
        {{ now }},
        cast(null as timestamp without time zone)
    from compared
    where compared.{{ outcome }} in (2, 3)
{%- endmacro %}
