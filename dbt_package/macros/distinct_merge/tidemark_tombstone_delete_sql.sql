{#-
  The DELETE of the replica rows whose key a pending run tombstoned, unless the batch
  holds the key (a later run landed it again), returning the key and the run. Not with
  a full run in the batch: that deletes every key the batch does not hold already.
  Driven by the tombstones, which are few, through the replica's primary key.
-#}
{% macro tidemark_tombstone_delete_sql(target, batch, tombstones, keys) -%}
    {%- set run_id = tidemark.tidemark_quote(tidemark.tidemark_contract('run_id_column')) -%}
    delete from {{ target }} as dbt_internal_dest
    using (
        select {% for key in keys %}tombstone.{{ key }}, {% endfor %}max(tombstone.{{ run_id }}) as run_id
        from {{ tombstones }} as tombstone
        where tombstone.{{ run_id }} in (select pending.run_id from pending where pending.in_batch)
        group by {% for key in keys %}tombstone.{{ key }}{{ ", " if not loop.last }}{% endfor %}
    ) as tombstone
    where
        not exists (select 1 from pending where pending.in_batch and pending.migration_type = 'full')
        {%- for key in keys %}
        and tombstone.{{ key }} = dbt_internal_dest.{{ key }}
        {%- endfor %}
        and not exists (
            select 1 from {{ batch }} as dbt_internal_source
            where
                {%- for key in keys %}
                dbt_internal_source.{{ key }} = dbt_internal_dest.{{ key }}{{ " and" if not loop.last }}
                {%- endfor %}
        )
    returning {% for key in keys %}dbt_internal_dest.{{ key }}, {% endfor %}tombstone.run_id
{%- endmacro %}
