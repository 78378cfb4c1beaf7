{#- The comment of a view tidemark_view made: a hash of its definition and of its grants. -#}
{% macro tidemark_view_marker(sql) -%}
    {{ return('tidemark view ' ~ local_md5(sql ~ '\n' ~ tojson(config.get('grants') or {}))) }}
{%- endmacro %}
