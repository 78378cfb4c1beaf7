{#-
  The fillfactor a history is given (a storage parameter; its columns and versions
  are dbt's). A page keeps a tenth free, so a new version does not go into the few
  bytes the vacuum of a closed version frees, scattered over the whole table: new
  versions are appended, and after a checkpoint a round of changes writes whole
  pages to the WAL for the versions it closes, not also for each it inserts. The
  versions of keys that change often end up together, so closing them again
  touches few pages.
-#}
{% macro tidemark_history_fillfactor() -%}
    90
{%- endmacro %}
