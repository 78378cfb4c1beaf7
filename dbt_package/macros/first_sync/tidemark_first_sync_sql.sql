{#-
  The merge into an empty replica: nothing to compare with. A first sync's own
  table (`landed`, from tidemark_landed_first_sync) becomes the replica where it
  can (tidemark_adopt_first_sync_sql); otherwise its rows, or else the batch's
  (`source`), are copied with a plain insert, every row counted inserted, and
  that table goes. The primary key, when nothing refers to it, is
  dropped first and built again after (one sorted index build instead of an
  index insertion per row: on 10,000,000 rows, 16 s instead of 25 s); the rows
  are counted in the replica afterwards, not returned by the insert (a returned
  row is kept until the statement ends: 1 to 3 s more on 10,000,000 rows).
  Run under the merge lock, in one transaction: nothing else writes the replica.
-#}
{% macro tidemark_first_sync_sql(target, source, dest_columns, table_key, landed) -%}
    {%- set all_columns = tidemark.tidemark_quoted_names(dest_columns | map(attribute='name')) | join(', ') -%}
    {%- set primary_key = tidemark.tidemark_rebuildable_primary_key(target) -%}
    {%- if landed is not none and primary_key and tidemark.tidemark_first_sync_adoptable(target, landed) -%}
        {{ return(tidemark.tidemark_adopt_first_sync_sql(target, landed, table_key, primary_key)) }}
    {%- endif %}
    {%- if primary_key %}
    alter table {{ target }} drop constraint {{ tidemark.tidemark_quote(primary_key[0]) }};
    {%- endif %}

    insert into {{ target }} ({{ all_columns }})
    select {{ all_columns }} from {{ source if landed is none else landed }};
    {%- if landed is not none %}

    drop table {{ landed }};
    {%- endif %}

    {{ tidemark.tidemark_log_all_inserted(target, table_key) }}
    {%- if primary_key %};

    alter table {{ target }} add constraint {{ tidemark.tidemark_quote(primary_key[0]) }} {{ primary_key[1] }}
    {%- endif %}
{%- endmacro %}
