{#-
  How a replica is built: the distinct merge of its pending batch, under the
  table's merge lock (the model's pre-hook), in one transaction. The extract
  creates every replica (typed, with its primary key) before its first merge,
  so there is one path, not dbt's incremental materialization with its
  full-refresh and schema-change branches: that one asks the database for a
  replica's columns four times per build and for its emptiness once more,
  which on hundreds of replicas costs more than the merges. Here the batch's
  temporary view, the replica's columns, whether it is empty and whether
  PostgreSQL enforces its key come from two statements (tidemark_merge_shapes).
  The last is the replica's key check: a replica needs no data test of its key
  to be run as a node of its own.
-#}
{% materialization tidemark_replica, adapter='postgres' -%}
    {%- set existing = tidemark.tidemark_relations_beside(this)[this | string] -%}
    {%- if existing is none or not existing.is_table -%}
        {{ exceptions.raise_compiler_error(
            "replica " ~ this ~ " is not a table in the target database: the extract creates it; run "
            ~ "python -m extract for this table before dbt build, or leave the model out with --exclude"
        ) }}
    {%- endif -%}
    {%- set batch = make_temp_relation(this).incorporate(type='view') -%}

    {{ run_hooks(pre_hooks, inside_transaction=False) }}
    {{ run_hooks(pre_hooks, inside_transaction=True) }}

    {% call statement('tidemark_batch') -%}
        create temporary view {{ batch }} as (
            {{ sql }}
        )
    {%- endcall %}
    {%- set shapes = tidemark.tidemark_merge_shapes(this, batch, config.get('unique_key')) -%}
    {%- if not shapes['key_enforced'] -%}
        {{ exceptions.raise_compiler_error(
            "replica " ~ this ~ ": PostgreSQL does not enforce its key (" ~ tidemark.tidemark_key_columns(
                config.get('unique_key')) | join(', ') ~ "): it needs a primary key or unique index on exactly those"
            ~ " columns, all NOT NULL, as the extract creates it: add one, or rebuild the replica with a"
            ~ " full refresh of its table (--full-refresh)"
        ) }}
    {%- endif -%}

    {% call statement('main') -%}
        {{ tidemark.tidemark_distinct_merge_sql(
            this, batch, config.get('unique_key'), shapes['replica'], shapes['batch'], shapes['empty']
        ) }}
    {%- endcall %}

    {{ return(tidemark.tidemark_built(true)) }}
{%- endmaterialization %}

