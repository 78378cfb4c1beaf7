{#-
  The state view: dbt's view materialization, made only when the view's
  definition changed. Every build selects it (it reports on every replica), and
  dbt's own materialization replaces a view with five statements each time; a
  view whose definition is the same reads the same rows. The view carries a hash
  of its SQL and grants as its comment (tidemark_view_marker); a view with that
  comment is kept, any other (none yet, another definition, a comment of a
  user's) is made again by dbt's materialization.
-#}
{% materialization tidemark_view, adapter='postgres' -%}
    {%- set marker = tidemark.tidemark_view_marker(sql) -%}
    {%- set existing = load_cached_relation(this) -%}
    {%- if existing is not none and existing.is_view -%}
        {% call statement('main', fetch_result=True) -%}
            select coalesce(
                obj_description(
                    to_regclass({{ tidemark.tidemark_quote_literal(this.include(database=false) | string) }}), 'pg_class'
                ) = {{ tidemark.tidemark_quote_literal(marker) }},
                false
            ) as unchanged
        {%- endcall %}
        {%- if load_result('main').table.rows[0][0] -%}
            {{ return({'relations': [this]}) }}
        {%- endif -%}
    {%- endif -%}
    {%- set made = dbt.materialization_view_default() -%}
    {% call statement('tidemark_view_marker', auto_begin=True) -%}
        comment on view {{ this }} is {{ tidemark.tidemark_quote_literal(marker) }}
    {%- endcall %}
    {% do adapter.commit() %}
    {{ return(made) }}
{%- endmaterialization %}
