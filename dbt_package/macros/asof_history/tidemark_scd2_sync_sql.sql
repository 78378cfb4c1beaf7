{#-
  Apply a full snapshot of a table as of date `as_of` to its SCD2 history, in any
  order of dates. One statement, set-based.

  The history is kept canonical: versions are maximal runs of consecutive synced
  dates with the same data (`valid_from` inclusive, `valid_to` exclusive, NULL for
  current). Syncing date D changes the history only around D: with P the synced
  date before D and N the one after, the versions that cover P, D or N are
  replaced by the runs of the three positions (the version covering P from its
  start, D with the snapshot's row, N until the end of the version covering it),
  equal neighbours merged. Re-syncing a synced date takes the same path, so
  applying the same snapshot again changes nothing. Only keys whose row at D
  differs from the version covering D are recomputed, and only versions that
  differ from what is there are deleted and inserted: a key unchanged at D costs
  a hash join and no write.

  history        relation: key columns, data columns, valid_from date, valid_to date
  snapshot       relation: key columns, data columns (the table as of `as_of`)
  synced_dates   relation: table_key text, as_of date (the dates synced per table)
  table_key      SQL string literal naming the table in synced_dates
  keys, columns  lists of quoted column names: the key, and the data compared
  as_of          SQL expression of type date; NULL changes nothing
  uncomparable   those of `columns` compared as text (json and xml have no equality)
  snapshot_run   optional SQL expression of the snapshot's run_id: its row in
                 the state schema's snapshot_log gets the counts of versions removed and added
-#}
{% macro tidemark_scd2_sync_sql(
    history, snapshot, synced_dates, table_key, keys, columns, as_of, uncomparable=[], snapshot_run=none
) -%}
    {%- set key_list = keys | join(', ') -%}
    {%- set data_list = columns | join(', ') -%}
    {%- set compared = [] -%}
    {%- for column in columns -%}
        {%- do compared.append(column ~ ('::text' if column in uncomparable else '')) -%}
    {%- endfor -%}
    with bounds as (
        select
            cast({{ as_of }} as date) as d,
            (
                select max(s.as_of) from {{ synced_dates }} as s
                where s.table_key = {{ table_key }} and s.as_of < cast({{ as_of }} as date)
            ) as p,
            (
                select min(s.as_of) from {{ synced_dates }} as s
                where s.table_key = {{ table_key }} and s.as_of > cast({{ as_of }} as date)
            ) as n
    ),

    snapshot_rows as (
        select {{ key_list }}, {{ data_list }} from {{ snapshot }}
    ),

    covering_d as (
        select h.*
        from {{ history }} as h
        cross join bounds as b
        where h.valid_from <= b.d and (h.valid_to is null or h.valid_to > b.d)
    ),

    {#-
      A key whose snapshot row equals the version covering D, or that is neither in
      the snapshot nor covered at D, keeps its history as it is: only the others
      are recomputed.
    -#}
    changed as (
        select {% for key in keys %}coalesce(s.{{ key }}, c.{{ key }}) as {{ key }}{{ ", " if not loop.last }}{% endfor %}
        from snapshot_rows as s
        full join covering_d as c
            on {% for key in keys %}s.{{ key }} = c.{{ key }}{{ " and " if not loop.last }}{% endfor %}
        where
            s.{{ keys[0] }} is null
            or c.{{ keys[0] }} is null
            {%- if compared %}
            or ({% for column in compared %}s.{{ column }}{{ ", " if not loop.last }}{% endfor %})
            is distinct from ({% for column in compared %}c.{{ column }}{{ ", " if not loop.last }}{% endfor %})
            {%- endif %}
    ),

    affected as (
        select
            h.ctid as row_id,
            h.*,
            coalesce(h.valid_from <= b.p and (h.valid_to is null or h.valid_to > b.p), false) as covers_p,
            coalesce(h.valid_from <= b.n and (h.valid_to is null or h.valid_to > b.n), false) as covers_n
        from {{ history }} as h
        cross join bounds as b
        where
            (
                coalesce(h.valid_from <= b.p and (h.valid_to is null or h.valid_to > b.p), false)
                or (h.valid_from <= b.d and (h.valid_to is null or h.valid_to > b.d))
                or coalesce(h.valid_from <= b.n and (h.valid_to is null or h.valid_to > b.n), false)
            )
            and exists (
                select 1 from changed
                where {% for key in keys %}changed.{{ key }} = h.{{ key }}{{ " and " if not loop.last }}{% endfor %}
            )
    ),

    present as (
        select {{ key_list }}, 1 as pos, {{ data_list }}, valid_from as starts, valid_to as ends
        from affected where covers_p
        union all
        select {{ key_list }}, 2 as pos, {{ data_list }}, null::date as starts, null::date as ends
        from snapshot_rows as s
        where exists (
            select 1 from changed
            where {% for key in keys %}changed.{{ key }} = s.{{ key }}{{ " and " if not loop.last }}{% endfor %}
        )
        union all
        select {{ key_list }}, 3 as pos, {{ data_list }}, null::date as starts, valid_to as ends
        from affected where covers_n
    ),

    grid as (
        select distinct_keys.*, positions.pos
        from (select distinct {{ key_list }} from present) as distinct_keys
        cross join bounds as b
        cross join (values (1), (2), (3)) as positions (pos)
        where
            (positions.pos = 1 and b.p is not null)
            or positions.pos = 2
            or (positions.pos = 3 and b.n is not null)
    ),

    filled as (
        select
            {% for key in keys %}grid.{{ key }}, {% endfor %}
            grid.pos,
            present.pos is not null as is_present,
            {% for column in columns %}present.{{ column }}, {% endfor %}
            case grid.pos when 1 then present.starts when 2 then b.d else b.n end as starts,
            present.ends
        from grid
        cross join bounds as b
        left join present
            on
                {% for key in keys %}grid.{{ key }} = present.{{ key }} and {% endfor %}grid.pos = present.pos
    ),

    marked as (
        select
            filled.*,
            case
                when lag(filled.pos) over by_key is null then 1
                when
                    (filled.is_present{% for column in compared %}, filled.{{ column }}{% endfor %})
                    is distinct from
                    (lag(filled.is_present) over by_key{% for column in compared %}, lag(filled.{{ column }}) over by_key{% endfor %})
                    then 1
                else 0
            end as starts_run,
            lead(filled.starts) over by_key as next_starts
        from filled
        window by_key as (partition by {% for key in keys %}filled.{{ key }}{{ ", " if not loop.last }}{% endfor %} order by filled.pos)
    ),

    runs as (
        select
            marked.*,
            sum(marked.starts_run) over (
                partition by {% for key in keys %}marked.{{ key }}{{ ", " if not loop.last }}{% endfor %}
                order by marked.pos
            ) as run_no
        from marked
    ),

    versions as (
        select distinct on ({{ key_list }}, run_no)
            {% for key in keys %}runs.{{ key }}, {% endfor %}
            {% for column in columns %}runs.{{ column }}, {% endfor %}
            first_value(runs.starts) over whole_run as valid_from,
            {#- A run's last position ends where the next position starts; the key's last one where it ended. -#}
            last_value(case when runs.next_starts is null then runs.ends else runs.next_starts end) over whole_run
                as valid_to
        from runs
        where runs.is_present
        window whole_run as (
            partition by {% for key in keys %}runs.{{ key }}, {% endfor %}runs.run_no
            order by runs.pos
            rows between unbounded preceding and unbounded following
        )
        order by {{ key_list }}, run_no
    ),

    removed as (
        delete from {{ history }} as h
        using affected
        where
            h.ctid = affected.row_id
            and not exists (
                select 1 from versions as v
                where {{ tidemark.tidemark_scd2_same_version('v', 'affected', keys, compared) }}
            )
        returning 1
    ),

    added as (
        insert into {{ history }} ({{ key_list }}, {{ data_list }}, valid_from, valid_to)
        select {{ key_list }}, {{ data_list }}, valid_from, valid_to from versions as v
        where not exists (
            select 1 from affected
            where {{ tidemark.tidemark_scd2_same_version('v', 'affected', keys, compared) }}
        )
        returning 1
    ),

    dated as (
        insert into {{ synced_dates }} (table_key, as_of)
        select {{ table_key }}, b.d from bounds as b
        where b.d is not null
        on conflict do nothing
        returning 1
    ){% if snapshot_run is not none %},

    counted as (
        update {{ tidemark.tidemark_state_relation('snapshot_log') }}
        set
            versions_removed = (select count(*) from removed),
            versions_added = (select count(*) from added)
        where run_id = {{ snapshot_run }}
        returning 1
    ){% endif %}

    select
        (select count(*) from removed) as versions_removed,
        (select count(*) from added) as versions_added,
        (select count(*) from dated) as dates_added
{%- endmacro %}

{#- The same version: key and dates equal, data not distinct (`compared` are column expressions). -#}
{% macro tidemark_scd2_same_version(left, right, keys, compared) -%}
    {% for key in keys %}{{ left }}.{{ key }} = {{ right }}.{{ key }} and {% endfor -%}
    {{ left }}.valid_from = {{ right }}.valid_from
    and {{ left }}.valid_to is not distinct from {{ right }}.valid_to
    {%- if compared %}
    and ({% for column in compared %}{{ left }}.{{ column }}{{ ", " if not loop.last }}{% endfor %})
    is not distinct from ({% for column in compared %}{{ right }}.{{ column }}{{ ", " if not loop.last }}{% endfor %})
    {%- endif %}
{%- endmacro %}
