{#-
  The end of a tidemark materialization (replica, history), as dbt's own end theirs: the
  grants (revoked first where the relation existed), the docs, the post-hooks in and after
  the transaction, the commit; the relations built, for dbt's cache.
-#}
{% macro tidemark_built(revoke) -%}
    {% do apply_grants(this, config.get('grants'), should_revoke=revoke) %}
    {% do persist_docs(this, model) %}
    {{ run_hooks(post_hooks, inside_transaction=True) }}
    {% do adapter.commit() %}
    {{ run_hooks(post_hooks, inside_transaction=False) }}
    {{ return({'relations': [this]}) }}
{%- endmacro %}
