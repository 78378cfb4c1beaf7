"""The wide section's source: many small tables of mixed types in one schema, each with a key and a
cursor, and a change to a few of them between passes."""

from __future__ import annotations

import psycopg
from psycopg import sql

from extract.devtools.ddl_times import install_ddl_times

SCHEMA = "wide"

_COLUMNS = """
    id bigint primary key,
    customer_id integer not null,
    amount numeric(12, 2) not null,
    ratio double precision,
    status varchar(12) not null,
    note text,
    active boolean not null,
    due date,
    "ModifiedDate" timestamp(3) not null
"""

# Stamped a day back: the safety window before a watermark does not reach them, as in a database whose
# rows were not all written in the last minutes.
_FILL = """
select
    i,
    (i * 7919) % 100000,
    round(((i * 104729) % 1000000) / 100.0, 2),
    case when i % 7 = 0 then null else i / 3.0 end,
    (array['open', 'paid', 'shipped', 'returned'])[1 + i % 4],
    case when i % 10 = 0 then null else 'note ' || md5(i::text) end,
    i % 3 = 0,
    date '2026-01-01' + (i % 365),
    timestamp '2026-01-01' + make_interval(secs => i / 10.0)
from generate_series(1, {rows}) as i
"""

# One row in a hundred gets a new amount and a fresh stamp.
_CHANGE = """
update {table}
set amount = amount + 1, status = 'amended',
    "ModifiedDate" = cast(clock_timestamp() at time zone 'UTC' as timestamp(3))
where id % 100 = 0
"""


def table_name(number: int) -> str:
    return f"t{number:04}"


def create(source_url: str, tables: int, rows: int) -> None:
    """`tables` tables of `rows` rows each in schema `wide`, created a day ago as far as the catalog knows."""
    fill = sql.SQL(_FILL).format(rows=sql.Literal(rows))
    with psycopg.connect(source_url, autocommit=True) as conn:
        install_ddl_times(conn)
        conn.execute(sql.SQL("drop schema if exists {0} cascade; create schema {0}").format(sql.Identifier(SCHEMA)))
        with conn.transaction():
            for number in range(tables):
                name = table_name(number)
                table = sql.Identifier(SCHEMA, name)
                conn.execute(sql.SQL("create table {} ({})").format(table, sql.SQL(_COLUMNS)))
                conn.execute(sql.SQL("insert into {} {}").format(table, fill))
                index = sql.Identifier(f"{name}_modified_date")
                conn.execute(sql.SQL('create index {} on {} ("ModifiedDate")').format(index, table))
        conn.execute("update tidemark_catalog.ddl_times set modified_at = modified_at - interval '1 day'")
        conn.execute("vacuum analyze")


def change(source_url: str, tables: list[str]) -> int:
    """Change one row in a hundred of each of `tables`; returns how many rows changed."""
    changed = 0
    with psycopg.connect(source_url, autocommit=True) as conn:
        for name in tables:
            changed += conn.execute(sql.SQL(_CHANGE).format(table=sql.Identifier(SCHEMA, name))).rowcount
    return changed


def totals(url: str, tables: list[tuple[str, str]]) -> tuple[int, str]:
    """Rows, and the sum of `amount`, over `tables` ((schema, table) pairs): what a copy must match."""
    parts = [
        sql.SQL("select count(*) as n, sum(amount) as amount from {}").format(sql.Identifier(schema, table))
        for schema, table in tables
    ]
    query = sql.SQL("select sum(n)::bigint, sum(amount)::text from ({}) as t").format(
        sql.SQL(" union all ").join(parts)
    )
    with psycopg.connect(url) as conn:
        row = conn.execute(query).fetchone()
    assert row is not None
    return int(row[0] or 0), str(row[1])
