{#- Names as the database knows them, from the quoted names the generated files configure ("a""b" is a"b). -#}
{% macro tidemark_unquoted_names(names) -%}
    {%- set plain = [] -%}
    {%- for name in names -%}
        {%- if name.startswith('"') and name.endswith('"') -%}
            {%- do plain.append(name[1:-1] | replace('""', '"')) -%}
        {%- else -%}
            {%- do plain.append(name) -%}
        {%- endif -%}
    {%- endfor -%}
    {{ return(plain) }}
{%- endmacro %}
