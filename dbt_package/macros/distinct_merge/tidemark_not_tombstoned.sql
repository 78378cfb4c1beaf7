{#- `and` a staged row (alias staged) is not followed by a tombstone of its key in a pending run. -#}
{% macro tidemark_not_tombstoned(tombstones, keys) -%}
    {%- if tombstones is not none %}
            and not exists (
                select 1 from {{ tombstones }} as tombstone
                where
                    tombstone.{{ tidemark.tidemark_quote(tidemark.tidemark_contract('run_id_column')) }} in (select pending.run_id from pending)
                    and tombstone.{{ tidemark.tidemark_quote(tidemark.tidemark_contract('run_id_column')) }}
                    > staged.{{ tidemark.tidemark_quote(tidemark.tidemark_contract('run_id_column')) }}
                    {%- for key in keys %}
                    and tombstone.{{ key }} = staged.{{ key }}
                    {%- endfor %}
            )
    {%- endif -%}
{%- endmacro %}
