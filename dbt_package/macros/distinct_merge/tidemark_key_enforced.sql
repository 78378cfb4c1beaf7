{#-
  A query of one row and one column, key_enforced: whether PostgreSQL itself
  keeps the replica `target`'s key `key_names` (unique_key: a name or a list of
  names, unquoted) free of repeats and NULLs. It does when a valid unique index
  without a predicate or an expression has exactly those key columns (the
  primary key the extract gives every replica is one) and every one of them is
  NOT NULL. The merge inserts with ON CONFLICT on the key, which needs that
  index anyway; checked before it, a replica that lost it is refused with its
  name and key, and no scan of its rows is needed to know that its key holds.
-#}
{% macro tidemark_key_enforced(target, key_names) -%}
    {%- set names = [key_names] if key_names is string else (key_names or []) -%}
    {%- set relation = "to_regclass(" ~ tidemark.tidemark_quote_literal(target | string) ~ ")" -%}
    {%- set asked -%}
        array[
            {%- for name in names %}{{ tidemark.tidemark_quote_literal(name) }}{{ ", " if not loop.last }}{% endfor -%}
        ]::text []
    {%- endset -%}
    select
        exists (
            select 1
            from pg_index as unique_index
            where
                unique_index.indrelid = {{ relation }}
                and unique_index.indisunique
                and unique_index.indisvalid
                and unique_index.indpred is null
                and unique_index.indexprs is null
                and array(
                    select attribute.attname::text
                    from unnest(unique_index.indkey::int2 []) with ordinality as indexed (attnum, position)
                    inner join pg_attribute as attribute
                        on attribute.attrelid = unique_index.indrelid and indexed.attnum = attribute.attnum
                    where indexed.position <= unique_index.indnkeyatts
                    order by 1
                ) = array(select asked.name from unnest({{ asked }}) as asked (name) order by 1)
        )
        and not exists (
            select 1
            from pg_attribute as attribute
            where
                attribute.attrelid = {{ relation }}
                and attribute.attname::text = any({{ asked }})
                and not attribute.attnotnull
        ) as key_enforced
{%- endmacro %}
