{#-
  The DELETE of the replica rows whose key a pending run tombstoned, unless the batch
  holds the key (a later run landed it again), returning the key and the run. Not with
  a full run in the batch: that deletes every key the batch does not hold already.
  Driven by the tombstones, which are few, through the replica's primary key. The pending
  runs are a value, not a join, and the tombstones meet the batch in a full join, which
  has no nested-loop plan (see tidemark_staged_batch): the batch is read once.
-#}
{% macro tidemark_tombstone_delete_sql(target, batch, tombstones, keys) -%}
    {%- set run_id = tidemark.tidemark_quote(tidemark.tidemark_contract('run_id_column')) -%}
    delete from {{ target }} as dbt_internal_dest
    using (
        select {% for key in keys %}latest.{{ key }}, {% endfor %}latest.run_id
        from (
            select {% for key in keys %}tombstone.{{ key }}, {% endfor %}max(tombstone.{{ run_id }}) as run_id
            from {{ tombstones }} as tombstone
            where tombstone.{{ run_id }} = any(array(select pending.run_id from pending where pending.in_batch))
            group by {% for key in keys %}tombstone.{{ key }}{{ ", " if not loop.last }}{% endfor %}
        ) as latest
        full join (select {{ keys | join(', ') }} from {{ batch }}) as held
            on
                {%- for key in keys %}
                held.{{ key }} = latest.{{ key }}{{ " and" if not loop.last }}
                {%- endfor %}
        {#- non-strict filters, so that the full join stays one: tombstoned, and not in the batch #}
        where coalesce(latest.run_id, 0) > 0 and held.{{ keys[0] }} is null
        {#- a fence: the join with the replica below would otherwise make this an anti join #}
        offset 0
    ) as tombstone
    where
        not exists (select 1 from pending where pending.in_batch and pending.migration_type = 'full')
        {%- for key in keys %}
        and tombstone.{{ key }} = dbt_internal_dest.{{ key }}
        {%- endfor %}
    returning {% for key in keys %}dbt_internal_dest.{{ key }}, {% endfor %}tombstone.run_id
{%- endmacro %}
