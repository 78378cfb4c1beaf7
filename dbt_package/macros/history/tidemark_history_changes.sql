{#-
  For the dbt snapshot of a replica (config tidemark_replica: its schema and
  table): the replica's changed-keys table when the snapshot may compare those
  keys only, or none when it compares every row: the replica changed in a way no
  key records (a row in history_rescans), or it has no changed-keys table yet.
  Read under the replica's merge lock (tidemark_history_lock), which every writer
  of either takes.
-#}
{% macro tidemark_history_changes(replica) -%}
    {%- if not execute or not replica -%}{{ return(none) }}{%- endif -%}
    {%- set relation = api.Relation.create(database=target.database, schema=replica[0], identifier=replica[1]) -%}
    {%- set changed = tidemark.tidemark_changed_keys(relation) -%}
    {%- if changed is none -%}{{ return(none) }}{%- endif -%}
    {%- set rescans = run_query(
        "select count(*) from " ~ tidemark.tidemark_state_relation('history_rescans')
        ~ " where table_key = " ~ tidemark.tidemark_table_key(relation)
    ) -%}
    {{ return(none if rescans.rows[0][0] > 0 else changed) }}
{%- endmacro %}
