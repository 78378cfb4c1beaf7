{#- The date a lake copy is filed under: today, in the session's time zone (UTC in the profile). -#}
{% macro tidemark_lake_date() -%}
    {{ return(adapter.dispatch('tidemark_lake_date', 'tidemark')()) }}
{%- endmacro %}

{% macro default__tidemark_lake_date() -%}
    current_date
{%- endmacro %}

{% macro spark__tidemark_lake_date() -%}
    current_date()
{%- endmacro %}
