"""The benchmark table in the stand-in source: generated rows, then a change to a share of them."""

from __future__ import annotations

import psycopg

SCHEMA = "bench"
TABLE = "Items"
KEY = "Id"
CURSOR = "ModifiedDate"
COLUMNS = ("Id", "CustomerId", "Amount", "Status", "Note", "ModifiedDate")

_CREATE = """
create table bench."Items" (
    "Id" bigint primary key,
    "CustomerId" integer not null,
    "Amount" numeric(12, 2) not null,
    "Status" varchar(12) not null,
    "Note" varchar(60),
    "ModifiedDate" timestamp(3) not null
)
"""

# Narrow rows of common types, about 60 bytes of text each; stamped a day ago so that
# the safety window before the watermark does not reach them.
_FILL = """
insert into bench."Items"
select
    i,
    (i * 7919) %% 100000,
    round(((i * 104729) %% 1000000) / 100.0, 2),
    (array['open', 'paid', 'shipped', 'returned'])[1 + i %% 4],
    case when i %% 10 = 0 then null else 'order note ' || md5(i::text) end,
    timestamp '2026-01-01' + make_interval(secs => i / 1000.0)
from generate_series(%s::bigint, %s::bigint) as i
"""

# Every n-th row gets a new amount and status and a fresh stamp: what an OLTP day does.
_CHANGE = """
update bench."Items"
set "Amount" = "Amount" + 1,
    "Status" = 'amended',
    "ModifiedDate" = cast(clock_timestamp() at time zone 'UTC' as timestamp(3))
where "Id" %% %s = 0
"""

FILL_CHUNK = 1_000_000


def create(conn: psycopg.Connection, rows: int) -> None:
    conn.execute("drop schema if exists bench cascade")
    conn.execute("create schema bench")
    conn.execute(_CREATE)
    for first in range(1, rows + 1, FILL_CHUNK):
        conn.execute(_FILL, (first, min(rows, first + FILL_CHUNK - 1)))
    # As on a real source table synced by its cursor: every tool's changed-rows query can use it.
    conn.execute('create index items_modified_date on bench."Items" ("ModifiedDate")')
    conn.execute('vacuum analyze bench."Items"')


def change(conn: psycopg.Connection, percent: int) -> int:
    """Change `percent`% of the rows (every 100/percent-th); returns how many."""
    every = max(1, 100 // percent)
    changed = conn.execute(_CHANGE, (every,)).rowcount
    conn.execute('vacuum analyze bench."Items"')
    return changed
