{#-
  The post-hook of a replica's dbt snapshot, in its transaction: what it compared
  is done with (the changed keys, the rescans asked for), and the history has the
  index a comparison of a few keys needs: current versions by key. Created once (a
  history of many versions takes that time once). Versions are closed by their row
  address, so the index by dbt_scd_id that histories had before is dropped: a
  random hash, it cost a random page of the index to every new version.
-#}
{% macro tidemark_history_compared() -%}
    {%- if not execute -%}{{ return('') }}{%- endif -%}
    {%- set replica = config.get('tidemark_replica') -%}
    {%- set relation = api.Relation.create(database=target.database, schema=replica[0], identifier=replica[1]) -%}
    {%- set changed = tidemark.tidemark_changed_keys(relation) -%}
    {%- set keys = config.get('unique_key') -%}
    {%- set keys = keys if keys is not string else [keys] -%}
    {%- set stem = 'tidemark_' ~ local_md5(this.schema ~ '.' ~ this.identifier)[:16] -%}
    {%- if changed is not none %}
    delete from {{ changed }};
    {%- endif %}
    delete from {{ tidemark.tidemark_state_relation('history_rescans') }}
    where table_key = {{ tidemark.tidemark_table_key(relation) }};
    create index if not exists {{ tidemark.tidemark_quote(stem ~ '_current') }}
    on {{ this }} ({{ keys | join(', ') }}) where dbt_valid_to is null;
    drop index if exists {{ tidemark.tidemark_quote(this.schema) }}.{{ tidemark.tidemark_quote(stem ~ '_scd_id') }}
{%- endmacro %}
