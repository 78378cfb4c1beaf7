{#-
  The staging table a replica model reads: its one source (the model body is
  tidemark_staged_batch(source(...))); none for a model with more or fewer sources.
-#}
{% macro tidemark_model_staging() -%}
    {%- if model.sources | length != 1 -%}{{ return(none) }}{%- endif -%}
    {{ return(source(model.sources[0][0], model.sources[0][1])) }}
{%- endmacro %}
