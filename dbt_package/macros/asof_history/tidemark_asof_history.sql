{#-
  An SCD2 history fed full snapshots of a table as of any date, in any order.

  The model selects the snapshot landing table of a replica (the rows landed by
  `python -m extract --table X --snapshot-date D`, with the run that landed each);
  config `snapshots_of` names the replica (schema.table) in the state schema's snapshot_log,
  and `unique_key` its key. Each landed snapshot not applied yet is applied with
  tidemark_scd2_sync_sql, oldest landing first, each in one transaction with the
  mark that it is applied; the dates a history holds are in the state schema's history_dates.
  Run ids and dates are read by the statements themselves, never formatted into SQL.
-#}
{% materialization tidemark_asof_history, adapter='postgres' %}
    {%- set keys = tidemark.tidemark_key_columns(config.get('unique_key')) -%}
    {%- set snapshots_of = tidemark.tidemark_quote_literal(config.require('snapshots_of')) -%}
    {%- set history_key = tidemark.tidemark_table_key(this) -%}
    {%- set target = this.incorporate(type='table') -%}

    {%- set columns = [] -%}
    {%- set uncomparable = [] -%}
    {%- for column in get_column_schema_from_query(sql) -%}
        {%- set quoted = tidemark.tidemark_quote(column.name) -%}
        {%- if column.name not in (tidemark.tidemark_contract('run_id_column'), tidemark.tidemark_contract('partition_column')) and quoted not in keys -%}
            {%- do columns.append(quoted) -%}
            {%- if column.data_type | lower in tidemark.tidemark_contract('uncomparable_types') -%}{%- do uncomparable.append(quoted) -%}{%- endif -%}
        {%- endif -%}
    {%- endfor -%}

    {%- set next_run -%}
        (
            select min(l.run_id) from {{ tidemark.tidemark_state_relation('snapshot_log') }} as l
            where l.table_key = {{ snapshots_of }} and l.status = 'landed' and l.applied_at is null
        )
    {%- endset -%}
    {%- set snapshot -%}
        (
            select model_rows.* from ({{ sql }}) as model_rows
            where model_rows.{{ tidemark.tidemark_quote(tidemark.tidemark_contract('run_id_column')) }} = {{ next_run }}
        ) as snapshot_rows
    {%- endset -%}
    {%- set as_of = "(select l.as_of from " ~ tidemark.tidemark_state_relation('snapshot_log') ~ " as l where l.run_id = " ~ next_run ~ ")" -%}

    {{ run_hooks(pre_hooks, inside_transaction=False) }}
    {{ run_hooks(pre_hooks, inside_transaction=True) }}

    {%- if load_relation(this) is none %}
        {% call statement('create_history') -%}
            create table {{ target }} as
            select {{ (keys + columns) | join(', ') }}, null::date as valid_from, null::date as valid_to
            from ({{ sql }}) as model_rows
            with no data;
            create index on {{ target }} ({{ keys | join(', ') }}, valid_from);
        {%- endcall %}
        {% do adapter.commit() %}
    {%- endif %}

    {%- set waiting = run_query(
        "select count(*) from " ~ tidemark.tidemark_state_relation('snapshot_log') ~ " as l where l.table_key = " ~ snapshots_of
        ~ " and l.status = 'landed' and l.applied_at is null"
    ) -%}
    {%- set waiting_count = waiting.columns[0].values()[0] | int if execute else 0 -%}
    {%- for _ in range(waiting_count) %}
        {#-
          One call, several statements: Postgres runs them as one transaction, whatever
          the connection's transaction mode. The lock serialises builds of this history,
          and each applies the oldest snapshot still waiting; now() is when it began.
        -#}
        {% call statement('apply_snapshot', fetch_result=True) -%}
            select pg_advisory_xact_lock(hashtext({{ tidemark.tidemark_lock_key(tidemark.tidemark_contract('history_lock_prefix'), history_key) }}));

            {{ tidemark.tidemark_scd2_sync_sql(
                target, snapshot, tidemark.tidemark_state_relation('history_dates'), history_key,
                keys, columns, as_of, uncomparable, next_run
            ) }};

            update {{ tidemark.tidemark_state_relation('snapshot_log') }}
            set applied_at = clock_timestamp(), apply_seconds = extract(epoch from clock_timestamp() - now())
            where run_id = {{ next_run }}
            returning as_of::text, versions_added, versions_removed, apply_seconds
        {%- endcall %}
        {%- set applied = load_result('apply_snapshot')['table'].rows -%}
        {% do adapter.commit() %}
        {%- if applied | length > 0 %}
            {{ log(this ~ ": applied the snapshot as of " ~ applied[0][0] ~ " in " ~ '%.1f' % applied[0][3]
                ~ "s: " ~ applied[0][1] ~ " version(s) in, " ~ applied[0][2] ~ " out", info=True) }}
        {%- endif %}
    {%- endfor %}

    {% call statement('main') -%}
        select count(*) as versions from {{ target }}
    {%- endcall %}

    {{ run_hooks(post_hooks, inside_transaction=True) }}
    {% do adapter.commit() %}
    {{ run_hooks(post_hooks, inside_transaction=False) }}
    {% do persist_docs(target, model) %}
    {{ return({'relations': [target]}) }}
{% endmaterialization %}
