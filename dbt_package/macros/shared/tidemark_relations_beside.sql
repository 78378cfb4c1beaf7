{#-
  The tables tidemark keeps with the replica `target` (the replica itself, its
  tombstones, changed keys and history) and the relations in `also`, each as a
  dbt relation when it exists or none, in a mapping by the relation's quoted name.
  One catalog query per node, kept in the node's `model` for the rest of its
  compilation or run: dbt's adapter.get_relation scans every relation it has
  cached on each call, and on a thousand replicas the five lookups of a replica
  node cost more than its statements. Only tables, views and materialized views
  count, as in dbt's own listing. The names are compared as the catalog's own
  type (name), so that its index on them answers: compared as text, every
  relation of the database is read.
-#}
{% macro tidemark_relations_beside(target, also=[]) -%}
    {%- set memo = model.setdefault('tidemark_relations', {}) if model is mapping else {} -%}
    {%- if not execute -%}{{ return(memo) }}{%- endif -%}
    {%- set missing = [] -%}
    {%- set names = [
        target.identifier,
        tidemark.tidemark_contract('tombstone_prefix') ~ target.identifier,
        tidemark.tidemark_contract('changed_keys_prefix') ~ target.identifier,
        target.identifier ~ tidemark.tidemark_contract('history_suffix'),
    ] -%}
    {%- set family = [] -%}
    {%- for name in names -%}
        {%- do family.append(api.Relation.create(database=target.database, schema=target.schema, identifier=name)) -%}
    {%- endfor -%}
    {%- for relation in family + also -%}
        {%- if (relation | string) not in memo and relation not in missing -%}{%- do missing.append(relation) -%}{%- endif -%}
    {%- endfor -%}
    {%- if missing -%}
        {%- set query -%}
        select
            namespace.nspname::text as schema_name,
            class.relname::text as relation_name,
            case class.relkind
                when 'v' then 'view' when 'm' then 'materialized_view' else 'table'
            end as relation_type
        from (values
            {%- for relation in missing %}
            ({{ tidemark.tidemark_quote_literal(relation.schema) }}, {{ tidemark.tidemark_quote_literal(relation.identifier) }}){{ "," if not loop.last }}
            {%- endfor %}
        ) as wanted (schema_name, relation_name)
        inner join pg_catalog.pg_namespace as namespace on wanted.schema_name::name = namespace.nspname
        inner join pg_catalog.pg_class as class
            on namespace.oid = class.relnamespace and wanted.relation_name::name = class.relname
        where class.relkind in ('r', 'p', 'v', 'm')
        {%- endset -%}
        {%- set found = run_query(query) -%}
        {%- for relation in missing -%}
            {%- set kind = {'type': none} -%}
            {%- for row in found if row[0] == relation.schema and row[1] == relation.identifier -%}
                {%- do kind.update({'type': row[2]}) -%}
            {%- endfor -%}
            {%- do memo.update({(relation | string): none if kind['type'] is none else api.Relation.create(
                database=relation.database, schema=relation.schema, identifier=relation.identifier, type=kind['type']
            )}) -%}
        {%- endfor -%}
    {%- endif -%}
    {{ return(memo) }}
{%- endmacro %}
