{#-
  What a replica history's run needs of the database, in one query: the history's
  column names, the replica's columns the history lacks (name and type, to add as
  dbt's snapshot adds them), the replica's column names, whether the history has a
  fillfactor (tidemark_history_fillfactor, or a user's own), and the changed-keys
  table when only its keys need comparing (none when every row must be: a row in
  history_rescans, or no changed-keys table). `replica`: its schema and table.
-#}
{% macro tidemark_history_shapes(history, replica) -%}
    {%- set relation = api.Relation.create(database=target.database, schema=replica[0], identifier=replica[1]) -%}
    {%- set query -%}
    select
        'history' as side,
        attribute.attname::text as column_name,
        null as type_text,
        attribute.attnum::int as position,
        rescans.waiting,
        storage.fillfactor
    from pg_attribute as attribute
    inner join (
        select
            history_class.oid,
            exists (
                select 1 from unnest(history_class.reloptions) as parameter
                where parameter like 'fillfactor=%'
            ) as fillfactor
        from pg_class as history_class
        where history_class.oid = to_regclass({{ tidemark.tidemark_quote_literal(history.include(database=false) | string) }})
    ) as storage on attribute.attrelid = storage.oid
    cross join (
        select count(*)::int as waiting
        from {{ tidemark.tidemark_state_relation('history_rescans') }}
        where table_key = {{ tidemark.tidemark_table_key(relation) }}
    ) as rescans
    where
        attribute.attnum > 0
        and not attribute.attisdropped

    union all

    select
        'replica' as side,
        attribute.attname::text as column_name,
        format_type(attribute.atttypid, attribute.atttypmod) as type_text,
        attribute.attnum::int as position,
        null as waiting,
        null as fillfactor
    from pg_attribute as attribute
    where
        attribute.attrelid = to_regclass({{ tidemark.tidemark_quote_literal(relation.include(database=false) | string) }})
        and attribute.attnum > 0
        and not attribute.attisdropped

    order by side, position
    {%- endset -%}
    {%- set history_columns = [] -%}
    {%- set replica_columns = [] -%}
    {%- set found = {'rescans': 0, 'fillfactor': false} -%}
    {%- for row in run_query(query) -%}
        {%- if row[0] == 'history' -%}
            {%- do history_columns.append(row[1]) -%}
            {%- do found.update({'rescans': row[4], 'fillfactor': row[5]}) -%}
        {%- else -%}
            {%- do replica_columns.append((row[1], row[2])) -%}
        {%- endif -%}
    {%- endfor -%}
    {%- set changed = tidemark.tidemark_changed_keys(relation) -%}
    {{ return({
        'history': history_columns,
        'replica': replica_columns | map(attribute=0) | list,
        'missing': replica_columns | rejectattr(0, 'in', history_columns) | list,
        'changed': changed if found['rescans'] == 0 else none,
        'fillfactor': found['fillfactor'],
    }) }}
{%- endmacro %}
