{#-
  Whether row `alias` has a key in the changed-keys table `changed` (`keys`: the
  key's quoted names, the same in both).
-#}
{% macro tidemark_changed_key(changed, alias, keys) -%}
    exists (
        select 1 from {{ changed }} as tidemark_changed
        where
            {%- for key in keys %}
            tidemark_changed.{{ key }} = {{ alias }}.{{ key }}{{ " and" if not loop.last }}
            {%- endfor %}
    )
{%- endmacro %}
