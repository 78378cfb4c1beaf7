{#-
  The staging table a replica model reads: its one source besides the source
  table it names for lineage (origin__...); the model body is
  tidemark.tidemark_staged_batch(source(...)). None for a model with more or fewer.
-#}
{% macro tidemark_model_staging() -%}
    {%- set staged = [] -%}
    {%- for found in model.sources -%}
        {%- if not found[0].startswith('origin__') -%}{%- do staged.append(found) -%}{%- endif -%}
    {%- endfor -%}
    {%- if staged | length != 1 -%}{{ return(none) }}{%- endif -%}
    {{ return(source(staged[0][0], staged[0][1])) }}
{%- endmacro %}
