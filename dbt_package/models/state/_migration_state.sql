-- The committed state of every replicated table, derived from the append-only
-- run log (written by the extract) and merge log (written with each merge).
-- It reports on every replica model (generated: macros_generated/), built first. The replicas and
-- the seed are the project's own nodes, so each ref names the project (dbt warns of a package's
-- model that depends on the root project's without saying so).
{%- if tidemark_replica_models is defined %}{% for name in tidemark_replica_models() %}{% do ref(project_name, name) %}{% endfor %}{% endif %}
with

runs as (
    select * from {{ source('tidemark_state', 'runs') }}
),

committed as (
    select * from {{ source('tidemark_state', 'committed_watermarks') }}
),

merge_events as (
    select * from {{ source('tidemark_state', 'merge_log') }}
),

configured as (
    select
        source_schema,
        source_table,
        {% if 'enabled' in tidemark.tidemark_column_names(ref(project_name, 'sync_tables')) -%}
            lower(cast(enabled as text)) not in ('false', '0', 'no', 'n', 'f')
        {%- else -%}
            true
        {%- endif %} as enabled
    from {{ ref(project_name, 'sync_tables') }}
    -- a pattern row is no table: the tables it takes are tracked by their runs
    where
        translate(source_schema || source_table, {{ tidemark.tidemark_quote_literal(tidemark.tidemark_contract('pattern_wildcards')) }}, '')
        = source_schema || source_table
),

latest_run as (
    select distinct on (table_key) *
    from runs
    order by table_key asc, run_id desc
),

latest_merge as (
    select distinct on (table_key) *
    from merge_events
    order by table_key asc, merge_id desc
),

last_merged_run as (
    select runs.*
    from runs
    inner join committed on runs.run_id = committed.run_id
),

tracked as (
    select
        latest_run.table_key,
        coalesce(latest_run.source_schema, configured.source_schema) as source_schema,
        coalesce(latest_run.source_table, configured.source_table) as source_table,
        coalesce(configured.enabled, false) as enabled
    from latest_run
    full outer join configured
        on
            lower(latest_run.source_schema) = lower(configured.source_schema)
            and lower(latest_run.source_table) = lower(configured.source_table)
)

select
    tracked.source_schema,
    tracked.source_table,
    latest_run.target_schema,
    latest_run.target_table,
    tracked.enabled,
    case
        when latest_run.run_id is null then 'never synced'
        when latest_run.status = 'failed' then 'failed'
        when latest_run.status = 'running' then 'extracting'
        when latest_run.run_id = any(latest_merge.run_ids) then 'success'
        else 'awaiting merge'
    end as sync_status,
    latest_run.run_id as last_run_id,
    last_merged_run.migration_type,
    last_merged_run.cursor_column,
    last_merged_run.source_filter,
    last_merged_run.started_at as last_sync_start,
    latest_merge.merged_at as last_sync_end,
    extract(epoch from latest_merge.merged_at - last_merged_run.started_at) as sync_duration_seconds,
    last_merged_run.rows_landed,
    latest_merge.rows_inserted,
    latest_merge.rows_updated,
    latest_merge.rows_unchanged,
    latest_merge.rows_deleted,
    latest_run.partition_positions,
    case
        when latest_run.partitions_planned is not null
            then
                json_build_object(
                    'partitions_planned', latest_run.partitions_planned,
                    'partitions_landed', latest_run.partitions_landed,
                    'rows_planned', latest_run.rows_planned,
                    'rows_landed', latest_run.rows_landed
                )::text
    end as partition_info,
    -- a clock reading; another reader's position (a version, a log sequence number, a file) is no time
    case
        when committed.watermark ~ '^[0-9]{4}-[0-9]{2}-[0-9]{2}[ T]' then committed.watermark::timestamp
    end as last_sync_timestamp,
    committed.watermark as last_sync_watermark,
    case when latest_run.status = 'failed' then latest_run.error_message end as error_message
from tracked
left join latest_run on tracked.table_key = latest_run.table_key
left join latest_merge on tracked.table_key = latest_merge.table_key
left join committed on tracked.table_key = committed.table_key
left join last_merged_run on tracked.table_key = last_merged_run.table_key
