{#-
  A lake model's select: the relation `schema`.`table` of the Postgres target (a replica, or
  its history), read by Spark's JDBC source through a temporary view, with the date of the copy.
  The lake folder's config writes it as Parquet, partitioned by that date, with insert_overwrite:
  a day's partition is the relation as it stood at that day's last lake build.

  The connection comes from the profile's variables by Spark's own substitution
  (${env:NAME}, resolved inside Spark when the statement runs), so the password is never in
  dbt's SQL, its logs or its manifest. Spark substitutes those values as they are: a value
  holding a single quote or a backslash cannot be passed this way.
-#}
{% macro tidemark_lake_copy(schema, table) -%}
    {{ return(adapter.dispatch('tidemark_lake_copy', 'tidemark')(schema, table)) }}
{%- endmacro %}

{#- Parsed on every target (the lake is disabled off Spark), refused only if run there. -#}
{% macro default__tidemark_lake_copy(schema, table) -%}
    {%- if execute -%}
        {{ exceptions.raise_compiler_error(
            "the lake models run on dbt-spark: dbt build --target spark --select lake (target "
            ~ target.name ~ " is " ~ target.type ~ ")"
        ) }}
    {%- endif -%}
{%- endmacro %}

{% macro spark__tidemark_lake_copy(schema, table) -%}
    {%- set view = 'tidemark_lake_source_' ~ local_md5(schema ~ '.' ~ table) -%}
    {%- if execute -%}
        {%- call statement('tidemark_lake_source') -%}
            create or replace temporary view {{ view }}
            using jdbc
            options (
                driver 'org.postgresql.Driver',
                url 'jdbc:postgresql://${env:TIDEMARK_TARGET_HOST}:${env:TIDEMARK_TARGET_PORT}/${env:TIDEMARK_TARGET_DBNAME}',
                user '${env:TIDEMARK_TARGET_USER}',
                password '${env:TIDEMARK_TARGET_PASSWORD}',
                dbtable {{ tidemark.tidemark_spark_string(tidemark.tidemark_quote(schema) ~ '.' ~ tidemark.tidemark_quote(table)) }},
                fetchsize '10000'
            )
        {%- endcall -%}
    {%- endif %}
    select
        source_rows.*,
        {{ tidemark.tidemark_lake_date() }} as _tidemark_sync_date
    from {{ view }} as source_rows
{%- endmacro %}
