{#-
  The replica `target`'s changed-keys table (the keys its merges changed since its
  dbt snapshot last ran, written by tidemark_log_changed_keys, read and emptied by
  the snapshot), or none when the extract has not created it, or while dbt only parses.
-#}
{% macro tidemark_changed_keys(target) -%}
    {{ return(tidemark.tidemark_relation_beside(target, tidemark.tidemark_contract('changed_keys_prefix'))) }}
{%- endmacro %}
