-- The state schema in the target, created (idempotently) by every extract run.
create schema if not exists {state};
revoke all on schema {state} from public;
create sequence if not exists {state}.run_id_seq;
create table if not exists {state}.run_log (
    event_id bigserial primary key,
    run_id bigint not null,
    table_key text not null,
    source_schema text not null,
    source_table text not null,
    target_schema text not null,
    target_table text not null,
    status text not null,
    migration_type text not null,
    cursor_column text,
    watermark_used text,
    watermark_candidate text,
    source_filter text,
    rows_landed bigint,
    error_message text,
    started_at timestamptz not null,
    ended_at timestamptz,
    logged_at timestamptz not null default clock_timestamp()
);
-- Called last_pk_synced before it held the landed prefix of a partition plan (JSON): renamed
-- where an older run log has it.
do $$
begin
    if exists (
        select 1 from information_schema.columns
        where table_schema = {state_name} and table_name = 'run_log' and column_name = 'last_pk_synced'
    ) then
        alter table {state}.run_log rename column last_pk_synced to partition_positions;
    end if;
end
$$;
alter table {state}.run_log add column if not exists partition_positions text;
alter table {state}.run_log add column if not exists partitions_planned integer;
alter table {state}.run_log add column if not exists partitions_landed integer;
alter table {state}.run_log add column if not exists rows_planned bigint;
-- 'spark' (partitions read in parallel by Spark) or 'driver' (a small batch, from the driver's JVM).
alter table {state}.run_log add column if not exists landed_by text;
create index if not exists run_log_table_key on {state}.run_log (table_key, run_id);
-- A reconcile is a run of its own kind; one that found nothing to repair ends 'exact', a dry
-- run 'reported': neither leaves anything for a merge.
alter table {state}.run_log drop constraint if exists run_log_migration_type_check;
alter table {state}.run_log add constraint run_log_migration_type_check
check (migration_type in ('full', 'incremental', 'reconcile'));
alter table {state}.run_log drop constraint if exists run_log_status_check;
alter table {state}.run_log add constraint run_log_status_check
check (status in ('running', 'landed', 'failed', 'exact', 'reported'));
create table if not exists {state}.merge_log (
    merge_id bigserial primary key,
    table_key text not null,
    run_ids bigint [] not null,
    rows_in_batch bigint not null,
    rows_inserted bigint not null,
    rows_updated bigint not null,
    rows_unchanged bigint not null,
    rows_deleted bigint not null,
    merge_started_at timestamptz not null,
    merged_at timestamptz not null default clock_timestamp()
);
-- Rows whose key changed in the source and moved with it (a seed's record_id recognises them).
alter table {state}.merge_log add column if not exists rows_key_changed bigint not null default 0;
create index if not exists merge_log_table_key on {state}.merge_log (table_key);
-- A table's latest merge, read by every pass's checks (extract/state/unchanged.py), from the index alone
-- however many merges the table has had.
create index if not exists merge_log_latest on {state}.merge_log (table_key, merge_id);
-- Seed 001's contract on each run: the state it read from and, once landed, the state its merge commits.
alter table {state}.run_log add column if not exists input_state jsonb;
alter table {state}.run_log add column if not exists output_state jsonb;
alter table {state}.run_log add column if not exists replaces_replica boolean;
alter table {state}.run_log add column if not exists plan_fingerprint text;
-- Why a run's merge moves the state where it does, when it is more than the run itself (a recovery).
alter table {state}.run_log add column if not exists state_reason text;

-- The state registry: per stream (replica), the state its merges committed, one version more at
-- every change. The merge's own transaction writes it (the trigger on merge_log below), so a run's
-- state is committed exactly when its rows are; `tidemark state` changes it by hand, compare-and-swap
-- on the version. cursor_value is what the next run reads changes since; NULL: it reads everything.
create table if not exists {state}.stream_state (
    table_key text primary key,
    reader text not null,
    cursor_field text,
    cursor_value text,
    version integer not null,
    run_id bigint,
    records_emitted bigint,
    updated_at timestamptz not null default clock_timestamp()
);
-- Every change of the registry: both states, the version it made, and why (a merge, or a manual
-- change by the role that made it).
create table if not exists {state}.state_audit (
    audit_id bigserial primary key,
    table_key text not null,
    version integer not null,
    old_state jsonb,
    new_state jsonb not null,
    reason text not null,
    run_id bigint,
    changed_by text not null default current_user,
    changed_at timestamptz not null default clock_timestamp()
);
create index if not exists state_audit_table_key on {state}.state_audit (table_key, version);

-- Which reader a committed state is for: a file source's cursor field is '_file_checkpoint'; a Change Tracking version is 'ct:' and 20 digits, a CDC log
-- sequence number 'lsn:' and 20 hex digits; a table without a cursor is read whole; a modify id is '0x'
-- and 16 hex digits; any other cursor value is a clock reading.
create or replace function {state}.tidemark_reader_kind(cursor_column text, cursor_value text) returns text
language sql immutable
as $$
    select case
        when cursor_column = '_file_checkpoint' then 'files'
        when cursor_value like 'ct:%' then 'change_tracking'
        when cursor_value like 'lsn:%' then 'cdc'
        when cursor_column is null then 'full_refresh'
        when cursor_value like '0x%' then 'modify_id'
        else 'clock_watermark'
    end
$$;

create or replace function {state}.tidemark_state_json(state {state}.stream_state) returns jsonb
language sql stable
as $$
    select jsonb_build_object(
        'stream_id', state.table_key, 'reader', state.reader, 'cursor_field', state.cursor_field,
        'cursor_value', state.cursor_value, 'version', state.version, 'run_id', state.run_id,
        'records_emitted', state.records_emitted
    )
$$;

-- A merge commits the state of the latest run it merged that read the source's clock or modify id.
create or replace function {state}.tidemark_commit_stream_state() returns trigger
language plpgsql
as $$
declare
    committing record;
    before {state}.stream_state;
    after {state}.stream_state;
begin
    select landed.run_id, landed.cursor_column, landed.watermark_candidate, landed.rows_landed, landed.state_reason
    into committing
    from {state}.run_log as landed
    where landed.run_id = any(new.run_ids) and landed.status = 'landed' and landed.watermark_candidate <> ''
    order by landed.run_id desc
    limit 1;
    if not found then
        return null;
    end if;
    select * into before from {state}.stream_state where table_key = new.table_key for update;
    after := (
        new.table_key,
        {state}.tidemark_reader_kind(committing.cursor_column, committing.watermark_candidate),
        committing.cursor_column,
        committing.watermark_candidate,
        coalesce(before.version, 0) + 1,
        committing.run_id,
        committing.rows_landed,
        clock_timestamp()
    );
    insert into {state}.stream_state values (after.*)
    on conflict (table_key) do update set
        reader = excluded.reader, cursor_field = excluded.cursor_field, cursor_value = excluded.cursor_value,
        version = excluded.version, run_id = excluded.run_id, records_emitted = excluded.records_emitted,
        updated_at = excluded.updated_at;
    insert into {state}.state_audit (table_key, version, old_state, new_state, reason, run_id)
    values (
        new.table_key, after.version,
        case when before.table_key is null then null else {state}.tidemark_state_json(before) end,
        {state}.tidemark_state_json(after),
        'run ' || committing.run_id || ' merged' || coalesce(': ' || committing.state_reason, ''),
        committing.run_id
    );
    return null;
end
$$;

drop trigger if exists commit_stream_state on {state}.merge_log;
create trigger commit_stream_state after insert on {state}.merge_log
for each row execute function {state}.tidemark_commit_stream_state();

-- A state schema from before the registry: each table's state as its merges committed it.
insert into {state}.stream_state (table_key, reader, cursor_field, cursor_value, version, run_id, records_emitted)
select distinct on (merged.table_key)
    merged.table_key,
    {state}.tidemark_reader_kind(landed.cursor_column, landed.watermark_candidate),
    landed.cursor_column,
    landed.watermark_candidate,
    1,
    landed.run_id,
    landed.rows_landed
from {state}.merge_log as merged
inner join {state}.run_log as landed
    on landed.run_id = any(merged.run_ids) and landed.status = 'landed' and landed.watermark_candidate <> ''
order by merged.table_key asc, landed.run_id desc
on conflict (table_key) do nothing;
insert into {state}.state_audit (table_key, version, new_state, reason, run_id)
select state.table_key, state.version, {state}.tidemark_state_json(state), 'carried over from the merge log', state.run_id
from {state}.stream_state as state
where not exists (select 1 from {state}.state_audit as audit where audit.table_key = state.table_key);
-- Every row a merge deleted: the run whose tombstone (or full read) removed it, and its key.
create table if not exists {state}.delete_log (
    delete_id bigserial primary key,
    table_key text not null,
    run_id bigint not null,
    key jsonb not null,
    deleted_at timestamptz not null default clock_timestamp()
);
create index if not exists delete_log_table_key on {state}.delete_log (table_key, run_id);
-- Every row a merge moved to a new key (its record_id kept): the run that landed it, both keys.
create table if not exists {state}.key_change_log (
    key_change_id bigserial primary key,
    table_key text not null,
    run_id bigint not null,
    old_key jsonb not null,
    new_key jsonb not null,
    changed_at timestamptz not null default clock_timestamp()
);
create index if not exists key_change_log_table_key on {state}.key_change_log (table_key, run_id);
-- One row per key-range partition of a run, planned before reading; a partition's
-- staging rows and its landed_at commit in one transaction.
create table if not exists {state}.partition_log (
    run_id bigint not null,
    partition_no integer not null,
    segment text not null,
    start_position text,
    end_position text,
    rows_landed bigint,
    landed_at timestamptz,
    primary key (run_id, partition_no)
);
-- One row per snapshot landed for an as-of history: landed by the extract, applied by
-- the history model (applied_at set in the transaction that applies it).
create table if not exists {state}.snapshot_log (
    run_id bigint primary key,
    table_key text not null,
    as_of date not null,
    origin text not null,
    status text not null check (status in ('running', 'landed', 'failed')),
    rows_landed bigint,
    error_message text,
    started_at timestamptz not null,
    landed_at timestamptz,
    applied_at timestamptz,
    apply_seconds double precision,
    versions_removed bigint,
    versions_added bigint
);
create index if not exists snapshot_log_table_key on {state}.snapshot_log (table_key, run_id);
alter table {state}.snapshot_log add column if not exists input_state jsonb;
alter table {state}.snapshot_log add column if not exists output_state jsonb;
-- The dates each as-of history holds (see macros/tidemark_scd2_sync_sql.sql).
create table if not exists {state}.history_dates (
    table_key text not null,
    as_of date not null,
    primary key (table_key, as_of)
);

-- The source's catalog as the last catalog read found it: one row per table in scope, its
-- columns and declared key as the source describes them, and a version counted up each time
-- its definition changes. Written in one transaction with catalog_marker.
create table if not exists {state}.catalog_state (
    source_schema text not null,
    source_table text not null,
    definition jsonb not null,
    version integer not null,
    label text not null check (label in ('CREATED', 'UPDATED', 'NO CHANGE')),
    modify_date text,
    catalog_read_id bigint not null,
    primary key (source_schema, source_table)
);
-- The source's clock when the last catalog read began (one row): the next read looks for
-- definitions changed since, less the prepone window.
create table if not exists {state}.catalog_marker (
    only_row boolean primary key default true check (only_row),
    marker text not null,
    catalog_read_id bigint not null,
    read_at timestamptz not null default clock_timestamp()
);
-- What each catalog read found changed: one row per table added or removed, and per column
-- added, dropped or retyped, or key changed.
create table if not exists {state}.catalog_diff (
    catalog_read_id bigint not null,
    source_schema text not null,
    source_table text not null,
    change text not null check (change in (
        'table_added', 'table_removed', 'column_added', 'column_dropped', 'column_retyped', 'key_changed'
    )),
    column_name text,
    old_definition text,
    new_definition text,
    recorded_at timestamptz not null default clock_timestamp()
);
create index if not exists catalog_diff_table on {state}.catalog_diff (source_schema, source_table);
create sequence if not exists {state}.catalog_read_id_seq;
-- What each schema evolution did to a replica (extract/evolution): a column added, dropped, kept
-- (append_new_columns), widened in place or replaced. A change whose column must be read again
-- for every row names the table's latest run then: until a full run after it is merged, the
-- table's runs read every row.
create table if not exists {state}.schema_changes (
    change_id bigserial primary key,
    table_key text not null,
    change text not null check (change in (
        'column_added', 'column_dropped', 'column_kept', 'column_widened', 'column_replaced'
    )),
    column_name text not null,
    old_definition text,
    new_definition text,
    on_schema_change text not null,
    backfill_after_run bigint,
    applied_at timestamptz not null default clock_timestamp()
);
create index if not exists schema_changes_table_key on {state}.schema_changes (table_key);

-- A pass that finds no row a table's next run would read lands no run for it: the check is kept
-- here instead, one row per table, overwritten by the next (it changes no state, so no version).
-- checked_through: the source's clock (or lowest active modify id) read before the check.
create table if not exists {state}.stream_checks (
    table_key text primary key,
    checked_through text not null,
    checked_at timestamptz not null
);
-- compared: when the check found the rows the next run would read (its safety window's, those of NULL
-- cursor) in the replica as they are, the source's query of their count and hash sum (a digest), those
-- figures, and the replica's latest merge then. Until another merge, the next check asks the source for
-- the figures alone (extract/readers/merged_already.py).
alter table {state}.stream_checks add column if not exists compared jsonb;

-- A replica's dbt snapshot (SCD2 history) compares only the keys its merges changed since it last
-- ran (each replica's changed-keys table): a row here makes its next run compare every row
-- instead, because the replica changed in a way no key records (a first sync, a full refresh, a
-- schema change, merges made before the changed-keys table existed). The snapshot deletes the
-- table's rows when it commits. Written under the table's merge lock, as the snapshot reads them.
create table if not exists {state}.history_rescans (
    rescan_id bigserial primary key,
    table_key text not null,
    reason text not null,
    marked_at timestamptz not null default now()
);
create index if not exists history_rescans_table on {state}.history_rescans (table_key);

-- What the extract and the dbt models both read: defined here once.

-- Schema changes whose backfill no full run merged since: the next run reads every row.
create or replace view {state}.backfills_due as
select
    changed.table_key,
    changed.change_id,
    coalesce(changed.column_name, changed.change) as backfilled
from {state}.schema_changes as changed
where
    changed.backfill_after_run is not null
    and not exists (
        select 1
        from {state}.merge_log as merged
        inner join {state}.run_log as landed
            on landed.run_id = any(merged.run_ids) and landed.status = 'landed'
        where
            merged.table_key = changed.table_key
            and landed.migration_type = 'full'
            and landed.run_id > changed.backfill_after_run
    );

-- Each run as its latest event says.
create or replace view {state}.runs as
select distinct on (run_id) *
from {state}.run_log
order by run_id asc, event_id desc;

-- Runs that landed and no merge has taken yet. A full run supersedes the runs
-- before it: they are merged with it, but their rows stay out of the batch.
create or replace view {state}.pending_runs as
select
    landed.table_key,
    landed.run_id,
    landed.migration_type,
    landed.run_id >= coalesce(
        max(landed.run_id) filter (where landed.migration_type = 'full') over (partition by landed.table_key), 0
    ) as in_batch
from {state}.run_log as landed
where
    landed.status = 'landed'
    and not exists (
        select 1 from {state}.merge_log as merged
        where merged.table_key = landed.table_key and landed.run_id = any(merged.run_ids)
    );

-- Each run as its latest event says, with the merge that took it (NULL until one did): what
-- `status --history` and `report` show. A landed run a merge took is 'merged'.
create or replace view {state}.run_history as
select
    runs.table_key,
    runs.run_id,
    runs.source_schema,
    runs.source_table,
    runs.migration_type,
    case when runs.status = 'landed' and merged.merge_id is not null then 'merged' else runs.status end as status,
    runs.rows_landed,
    runs.started_at,
    runs.ended_at,
    runs.error_message,
    merged.merge_id,
    merged.rows_inserted,
    merged.rows_updated,
    merged.rows_unchanged,
    merged.rows_deleted,
    merged.merge_started_at,
    merged.merged_at
from {state}.runs as runs
left join lateral (
    select m.*
    from {state}.merge_log as m
    where m.table_key = runs.table_key and runs.run_id = any(m.run_ids)
    order by m.merge_id
    limit 1
) as merged on true;

-- Per table, the watermark its merges committed (the registry's cursor value): a clock reading
-- or, for a modify-id cursor, '0x' and 16 hex digits. The next run reads the rows changed since
-- (less the safety window); a table without one is read whole. run_id is the latest run a merge
-- took (a reconcile's too): what `status`, the lag metric and the freshness check describe.
create or replace view {state}.committed_watermarks as
select
    state.table_key,
    state.cursor_value as watermark,
    merged.run_id
from {state}.stream_state as state
left join lateral (
    select max(run.id) as run_id
    from {state}.merge_log as m
    cross join lateral unnest(m.run_ids) as run (id)
    where m.table_key = state.table_key
) as merged on true
where state.cursor_value is not null;

-- Per table, when its replica was last known to hold the source: the start of the run whose state is
-- committed, or a later check that found nothing to read (the freshness checks and the lag metric).
create or replace view {state}.freshness as
select
    committed.table_key,
    greatest(committed_run.started_at, checks.checked_at) as fresh_as_of
from {state}.committed_watermarks as committed
left join lateral (
    select run.started_at from {state}.run_log as run
    where run.run_id = committed.run_id
    order by run.event_id
    limit 1
) as committed_run on true
left join {state}.stream_checks as checks on committed.table_key = checks.table_key;

-- The canonical text of a value, one function per form (extract/project/verify.py's kind_of
-- says which form a replica column takes), and the two hashes reconcile takes of a row's text:
-- the one definition of both in PostgreSQL. extract/source/dialects/postgres_canonical.py
-- writes their bodies inlined, on the stand-in source (which has no such schema) and on the
-- target alike. Immutable: to_char is only stable because some patterns follow the locale,
-- which these do not, and the output of types like interval follows a setting (IntervalStyle)
-- that tidemark's sessions leave at its default.
create or replace function {state}.tidemark_int_text(value bigint) returns text
language sql immutable strict parallel safe
as $$ select cast(value as text) $$;

-- Without trailing zeros: 1.50 and 1.5 are one value.
create or replace function {state}.tidemark_decimal_text(value numeric) returns text
language sql immutable strict parallel safe
as $$ select cast(trim_scale(value) as text) $$;

create or replace function {state}.tidemark_float_text(value double precision) returns text
language sql immutable strict parallel safe
as $$ select cast(value as text) $$;

create or replace function {state}.tidemark_stamp_text(value timestamp) returns text
language sql immutable strict parallel safe
as $$ select to_char(value, 'YYYY-MM-DD"T"HH24:MI:SS.US') $$;

create or replace function {state}.tidemark_stamp_text(value timestamptz) returns text
language sql immutable strict parallel safe
as $$ select to_char(value at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US') $$;

create or replace function {state}.tidemark_date_text(value date) returns text
language sql immutable strict parallel safe
as $$ select to_char(value, 'YYYY-MM-DD') $$;

create or replace function {state}.tidemark_time_text(value time) returns text
language sql immutable strict parallel safe
as $$ select to_char(value, 'HH24:MI:SS.US') $$;

create or replace function {state}.tidemark_bool_text(value boolean) returns text
language sql immutable strict parallel safe
as $$ select case when value then 'true' when not value then 'false' end $$;

create or replace function {state}.tidemark_bytes_text(value bytea) returns text
language sql immutable strict parallel safe
as $$ select encode(value, 'hex') $$;

-- PostgreSQL writes a uuid in lower case already: a lower() per row cost a third of a uuid key's hash.
create or replace function {state}.tidemark_uuid_text(value uuid) returns text
language sql immutable strict parallel safe
as $$ select cast(value as text) $$;

-- char(n) loses its padding when cast to text; rpad puts it back (`width` is the n).
create or replace function {state}.tidemark_char_text(value bpchar, width integer) returns text
language sql immutable strict parallel safe
as $$ select rpad(cast(value as text), width) $$;

-- Any other value as its text.
create or replace function {state}.tidemark_any_text(value anyelement) returns text
language sql immutable strict parallel safe
as $$ select cast(value as text) $$;

-- The first 60 bits of a text's md5 as a non-negative bigint (a key's place in the key-hash
-- space), and the first 64 bits as a signed bigint (a row's content).
create or replace function {state}.tidemark_hash60(value text) returns bigint
language sql immutable strict parallel safe
as $$ select cast(cast('x' || substr(md5(value), 2, 15) as bit(60)) as bigint) $$;

create or replace function {state}.tidemark_hash64(value text) returns bigint
language sql immutable strict parallel safe
as $$ select cast(cast('x' || substr(md5(value), 1, 16) as bit(64)) as bigint) $$;

-- Key values the logs keep (deleted keys, key changes, partition positions) are stored encrypted once
-- a state key protects the schema: its one row holds the pgcrypto schema and a text encrypted with the
-- key, which tells a wrong key. The key never reaches SQL text: a session brings it as the custom
-- setting tidemark.state_key (libpq's options, PGOPTIONS for dbt), and tidemark_protect and
-- tidemark_reveal read it. A session without it, or with another key, fails instead of writing clear
-- values or garbage. Values written before protection stay as they were, readable as they are.
create table if not exists {state}.state_protection (
    only_row boolean primary key default true check (only_row),
    pgcrypto_schema text not null,
    key_check bytea not null,
    protected_since timestamptz not null default clock_timestamp()
);

-- The session's state key, checked against the schema's (once per transaction); NULL while the schema
-- is not protected. `pgcrypto` (out) is the schema of pgcrypto's functions.
create or replace function {state}.tidemark_state_key(out key text, out pgcrypto text)
language plpgsql stable
as $$
declare
    protection record;
    checked text;
begin
    select * into protection from {state}.state_protection;
    if not found then
        return;
    end if;
    key := current_setting('tidemark.state_key', true);
    pgcrypto := protection.pgcrypto_schema;
    if coalesce(key, '') = '' then
        raise exception 'the state schema % keeps key values encrypted: set TIDEMARK_STATE_KEY (a plain dbt: PGOPTIONS=''-c tidemark.state_key=...'')', {state_name}
            using errcode = '28P01';
    end if;
    if current_setting('tidemark.state_key_checked', true) = md5(key) then
        return;
    end if;
    begin
        execute format('select %I.pgp_sym_decrypt($1, $2)', pgcrypto) into checked using protection.key_check, key;
    exception when others then
        checked := null;
    end;
    if checked is distinct from 'tidemark state key' then
        raise exception 'TIDEMARK_STATE_KEY is not the key the state schema % is encrypted with', {state_name}
            using errcode = '28P01';
    end if;
    perform set_config('tidemark.state_key_checked', md5(key), true);
end
$$;

-- What a key value is stored as: encrypted (the prefix, then base64) once the schema is protected.
create or replace function {state}.tidemark_protect(value text) returns text
language plpgsql volatile
as $$
declare
    session record;
    sealed bytea;
begin
    if value is null then
        return null;
    end if;
    session := {state}.tidemark_state_key();
    if session.key is null then
        return value;
    end if;
    execute format('select %I.pgp_sym_encrypt($1, $2)', session.pgcrypto) into sealed using value, session.key;
    return 'tidemark:pgp:' || translate(encode(sealed, 'base64'), E'\n', '');
end
$$;

-- A stored key value as it was given: decrypted when it is encrypted, else as it is.
create or replace function {state}.tidemark_reveal(value text) returns text
language plpgsql stable
as $$
declare
    session record;
    opened text;
begin
    if value is null or left(value, 13) <> 'tidemark:pgp:' then
        return value;
    end if;
    session := {state}.tidemark_state_key();
    execute format('select %I.pgp_sym_decrypt($1, $2)', session.pgcrypto)
    into opened using decode(substr(value, 14), 'base64'), session.key;
    return opened;
end
$$;

-- The same for a key held as JSON (delete_log, key_change_log): encrypted, it is a JSON string; clear, the
-- JSON it was.
create or replace function {state}.tidemark_protect_json(value jsonb) returns jsonb
language plpgsql volatile
as $$
declare
    sealed text := {state}.tidemark_protect(value::text);
begin
    return case when sealed is distinct from value::text then to_jsonb(sealed) else value end;
end
$$;

create or replace function {state}.tidemark_reveal_json(value jsonb) returns jsonb
language sql stable
as $$
    select case when jsonb_typeof(value) = 'string' then cast({state}.tidemark_reveal(value #>> '{{}}') as jsonb) else value end
$$;

-- File sources (extract/files): the files each run planned to land ('land'), found with a new time but the
-- same content ('same': the new time is kept, so the file is not read again), found gone and deleted
-- ('remove'), or could not read ('failed', with why).
create table if not exists {state}.file_log (
    table_key text not null,
    run_id bigint not null,
    path text not null,
    size bigint not null,
    modified_ms bigint not null,
    sha256 text not null,
    action text not null check (action in ('land', 'same', 'remove', 'failed')),
    rows_landed bigint,
    error text,
    primary key (table_key, run_id, path)
);
-- Each file source's checkpoint: every file its merges took, as it was then, one row a file and no cap.
-- A merge writes it in its own transaction (the trigger below), as it writes the registry.
create table if not exists {state}.file_checkpoint (
    table_key text not null,
    path text not null,
    size bigint not null,
    modified_ms bigint not null,
    sha256 text not null,
    rows_landed bigint,
    run_id bigint not null,
    committed_at timestamptz not null default clock_timestamp(),
    primary key (table_key, path)
);

create or replace function {state}.tidemark_commit_file_checkpoint() returns trigger
language plpgsql
as $$
begin
    with taken as (
        select distinct on (logged.path) logged.*
        from {state}.file_log as logged
        where logged.table_key = new.table_key and logged.run_id = any(new.run_ids) and logged.action <> 'failed'
        order by logged.path asc, logged.run_id desc
    ),

    removed as (
        delete from {state}.file_checkpoint as kept
        using taken
        where kept.table_key = taken.table_key and kept.path = taken.path and taken.action = 'remove'
    )

    insert into {state}.file_checkpoint as kept (table_key, path, size, modified_ms, sha256, rows_landed, run_id)
    select taken.table_key, taken.path, taken.size, taken.modified_ms, taken.sha256, taken.rows_landed, taken.run_id
    from taken
    where taken.action <> 'remove'
    on conflict (table_key, path) do update set
        size = excluded.size, modified_ms = excluded.modified_ms, sha256 = excluded.sha256,
        rows_landed = coalesce(excluded.rows_landed, kept.rows_landed), run_id = excluded.run_id,
        committed_at = clock_timestamp();
    return null;
end
$$;

drop trigger if exists commit_file_checkpoint on {state}.merge_log;
create trigger commit_file_checkpoint after insert on {state}.merge_log
for each row execute function {state}.tidemark_commit_file_checkpoint();

-- Nothing of the state schema for PUBLIC: functions are executable by anyone unless revoked.
revoke all on all functions in schema {state} from public;
