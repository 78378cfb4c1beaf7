{#-
  A Spark SQL string literal for any text: backslash and single quote escaped with a backslash,
  and "$" written as \u0024 so that Spark's variable substitution (${...}) never sees it. The
  one quoting function for string values in Spark SQL in these macros.
-#}
{% macro tidemark_spark_string(value) -%}
    '{{ value | replace("\\", "\\\\") | replace("'", "\\'") | replace("$", "\\u0024") }}'
{%- endmacro %}
