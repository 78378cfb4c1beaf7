"""A batch of source changes for the demo: inserts, updates that bump the cursor, NULL cursors.

Cursor values are stamped with the source server's UTC clock, as SYSUTCDATETIME() would.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from datetime import datetime

import psycopg

from extract.devtools.demo.generator import customer_row, order_row

NOW = "(clock_timestamp() at time zone 'UTC')"
#: Adds a statement's row count to the report under a name.
Counter = Callable[[str, psycopg.Cursor], None]


def apply_changes(conn: psycopg.Connection, seed: int) -> dict[str, int]:
    rng = random.Random(seed)
    done: dict[str, int] = {}

    def count(name: str, cursor: psycopg.Cursor) -> None:
        done[name] = done.get(name, 0) + max(cursor.rowcount, 0)

    row = conn.execute(
        'select (select max("CustomerID") from dbo."Customers"), (select max("OrderID") from dbo."Orders"), ' + NOW
    ).fetchone()
    assert row is not None
    max_customer, max_order, now = int(row[0]), int(row[1]), row[2]
    with conn.cursor() as cur:
        _change_customers_and_products(cur, rng, max_customer, now, count)
        _change_orders(cur, rng, seed, max_customer, max_order, now, count)
        cur.execute(
            'update dbo."Countries" set "Population" = coalesce("Population", 0) + %s where "CountryCode" = %s',
            (rng.randint(1, 1000), rng.choice(["AT", "DE", "JP"])),
        )
        count("countries updated (no cursor: full refresh)", cur)
    conn.commit()
    return done


def _change_customers_and_products(
    cur: psycopg.Cursor, rng: random.Random, max_customer: int, now: datetime, count: Counter
) -> None:
    new_customers = [customer_row(rng, max_customer + i, now) for i in range(1, 6)]
    cur.executemany(
        'insert into dbo."Customers" values (%s, %s, %s, %s, %s, %s, %s, ' + NOW + ")",
        [c[:-1] for c in new_customers],
    )
    count("customers inserted", cur)
    cur.execute(
        'update dbo."Customers" set "CreditLimit" = "CreditLimit" + 100, "ModifiedDate" = '
        + NOW
        + ' where "CustomerID" %% 7 = %s',
        (rng.randint(0, 6),),
    )
    count("customers updated", cur)
    cur.execute(
        'update dbo."Products" set "ListPrice" = "ListPrice" * 1.05, "LastEditedWhen" = '
        + NOW
        + ' where "Sku" like %s',
        (f"SKU-%{rng.randint(0, 9)}",),
    )
    count("products updated", cur)


def _change_orders(
    cur: psycopg.Cursor, rng: random.Random, seed: int, max_customer: int, max_order: int, now: datetime, count: Counter
) -> None:
    orders = [order_row(rng, max_order + i, max_customer, now) for i in range(1, 11)]
    # Half the new orders carry no cursor value at all.
    cur.executemany(
        'insert into dbo."Orders" values (%s, %s, %s, %s, %s, %s, case when %s then ' + NOW + " end)",
        [(*o[:-1], i % 2 == 0) for i, o in enumerate(orders)],
    )
    count("orders inserted (half with NULL UpdatedAt)", cur)
    cur.execute(
        'update dbo."Orders" set "Status" = %s, "UpdatedAt" = ' + NOW + ' where "OrderID" %% 11 = %s',
        (rng.choice(["paid", "shipped"]), rng.randint(0, 10)),
    )
    count("orders updated", cur)
    cur.execute(
        'update dbo."Orders" set "Notes" = coalesce("Notes", %s) || %s where "UpdatedAt" is null',
        ("", f" [seen {seed}]"),
    )
    count("orders with NULL UpdatedAt changed", cur)
    cur.execute(
        'insert into dbo."OrderLines" select o."OrderID", 1, p."ProductID", 1, p."ListPrice", '
        + NOW
        + ' from dbo."Orders" as o cross join lateral'
        ' (select "ProductID", "ListPrice" from dbo."Products" order by "Sku" limit 1) as p'
        ' where o."OrderID" > %s',
        (max_order,),
    )
    count("order lines inserted", cur)
