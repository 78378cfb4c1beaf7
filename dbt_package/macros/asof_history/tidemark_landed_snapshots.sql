{#-
  The model body of an as-of history: the snapshot landing table, every landed run;
  the tidemark_asof_history materialization picks each run in turn. Use as
  {{ tidemark.tidemark_landed_snapshots(source('<schema>', 'snap__<table>')) }}.
-#}
{% macro tidemark_landed_snapshots(landing) -%}
    {%- if execute and load_relation(landing) is none -%}
        {{ exceptions.raise_compiler_error(
            "snapshot table " ~ landing ~ " does not exist yet: run the extract for this table "
            ~ "(python -m extract --table ...) before dbt build"
        ) }}
    {%- endif %}
    select landed.* from {{ landing }} as landed
{%- endmacro %}
