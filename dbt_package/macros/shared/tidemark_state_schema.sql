{#-
  The project's state schema: TIDEMARK_STATE_SCHEMA, which tidemark hands the dbt it runs (a plain
  dbt reads it from the environment too), else the default. extract/core/state_schema.py is the same
  in Python; the state model's +schema and its sources read the same variable.
-#}
{% macro tidemark_state_schema() -%}
    {{ return(env_var('TIDEMARK_STATE_SCHEMA', tidemark.tidemark_contract('default_state_schema'))) }}
{%- endmacro %}
