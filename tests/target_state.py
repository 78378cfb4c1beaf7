"""What a database holds, as one comparable value: every schema, relation and column outside the
system schemas, each table's rows (an md5 of them in a fixed order) and each sequence's value."""

from __future__ import annotations

import psycopg
from psycopg import sql


def database_state(url: str) -> dict[str, str]:
    with psycopg.connect(url, autocommit=True) as conn:
        relations = conn.execute(
            """
            select n.nspname, c.relname, c.relkind::text,
                coalesce(string_agg(a.attname || ' ' || format_type(a.atttypid, a.atttypmod), ', '
                    order by a.attnum), '')
            from pg_class as c
            inner join pg_namespace as n on n.oid = c.relnamespace
            left join pg_attribute as a on a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped
            where n.nspname not like 'pg\\_%' and n.nspname <> 'information_schema'
                and c.relkind in ('r', 'v', 'S', 'p')
            group by n.nspname, c.relname, c.relkind
            """
        ).fetchall()
        state = {
            f"schema {name}": ""
            for (name,) in conn.execute(
                "select nspname from pg_namespace where nspname not like 'pg\\_%' and nspname <> 'information_schema'"
            ).fetchall()
        }
        for schema, name, kind, columns in relations:
            relation = sql.Identifier(schema, name)
            if kind == "S":
                row = conn.execute(sql.SQL("select last_value::text from {}").format(relation)).fetchone()
            elif kind == "v":
                row = ("view",)
            else:
                row = conn.execute(
                    sql.SQL(
                        "select md5(coalesce(string_agg(t::text, chr(10) order by t::text), '')) from {} as t"
                    ).format(relation)
                ).fetchone()
            state[f"{kind} {schema}.{name} ({columns})"] = str(row[0] if row else None)
    return state
