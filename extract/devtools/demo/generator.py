"""Demo data: a small SQL-Server-shaped OLTP database in the stand-in source.

Cursor columns differ per table (ModifiedDate, LastEditedWhen, UpdatedAt), one table
has a composite key, one has no cursor at all, some cursor values are NULL, and the
values cover unicode text, decimals, uuids, booleans and binary.
"""

from __future__ import annotations

import random
import uuid
from datetime import datetime, timedelta
from decimal import Decimal

import psycopg
from psycopg import sql

SCHEMA = "dbo"

DDL = """
create schema if not exists dbo;
create table dbo."Countries" (
    "CountryCode" char(2) primary key,
    "Name" varchar(60) not null,
    "Population" bigint
);
create table dbo."Customers" (
    "CustomerID" integer primary key,
    "Name" varchar(100) not null,
    "Email" varchar(200),
    "CountryCode" char(2),
    "CreditLimit" numeric(12, 2),
    "IsActive" boolean not null,
    "RowGuid" uuid not null,
    "ModifiedDate" timestamp(3) not null
);
create table dbo."Products" (
    "ProductID" uuid primary key,
    "Sku" varchar(20) not null,
    "Name" text not null,
    "ListPrice" numeric(10, 4) not null,
    "Weight" double precision,
    "Thumbnail" bytea,
    "Discontinued" boolean not null,
    "LastEditedWhen" timestamp(6) not null
);
create table dbo."Orders" (
    "OrderID" bigint primary key,
    "CustomerID" integer not null,
    "OrderDate" date not null,
    "Status" varchar(20) not null,
    "Notes" text,
    "TotalDue" numeric(19, 4),
    "UpdatedAt" timestamp(6)
);
create table dbo."OrderLines" (
    "OrderID" bigint not null,
    "LineNumber" smallint not null,
    "ProductID" uuid not null,
    "Quantity" integer not null,
    "UnitPrice" numeric(19, 4) not null,
    "ModifiedDate" timestamp(3),
    primary key ("OrderID", "LineNumber")
);
"""

COUNTRIES = [
    ("AT", "Österreich", 9_100_000),
    ("BR", "Brasil", 216_000_000),
    ("CI", "Côte d’Ivoire", 28_000_000),
    ("DE", "Deutschland", 84_000_000),
    ("ES", "España", 48_000_000),
    ("GR", "Ελλάδα", 10_400_000),
    ("IN", "भारत", 1_430_000_000),
    ("JP", "日本", 124_000_000),
    ("KR", "대한민국", 51_700_000),
    ("RU", "Россия", 144_000_000),
    ("US", "United States", 335_000_000),
    ("ZA", "South Africa", None),
]
FIRST = ["Ana", "Björn", "Chloé", "Dmitri", "Eun-ji", "François", "Giulia", "Hiro", "Ingrid", "José", "Zoë", "Łukasz"]
LAST = ["García", "Müller", "O'Brien", "Søren", "Nakamura", "Kowalski", "Dubois", "Ivanov", "Smith", "Nguyễn"]
WORDS = ["Widget", "Gadget", "Bolt", "Sprocket", "Valve", "Gear", "Ratchet", "Flange", "Hinge", "Bracket"]
STATUSES = ["open", "paid", "shipped", "cancelled"]


def _stamp(rng: random.Random, base: datetime) -> datetime:
    return base - timedelta(
        days=rng.randint(1, 400), seconds=rng.randint(0, 86_399), microseconds=rng.randint(0, 999) * 1000
    )


def customer_row(rng: random.Random, customer_id: int, base: datetime) -> tuple[object, ...]:
    name = f"{rng.choice(FIRST)} {rng.choice(LAST)}"
    return (
        customer_id,
        name,
        None if rng.random() < 0.1 else f"c{customer_id}@example.com",
        rng.choice(COUNTRIES)[0],
        Decimal(rng.randint(0, 10_000_000)) / 100,
        rng.random() < 0.9,
        uuid.UUID(int=rng.getrandbits(128), version=4),
        _stamp(rng, base),
    )


def product_row(rng: random.Random, number: int, base: datetime) -> tuple[object, ...]:
    return (
        uuid.UUID(int=rng.getrandbits(128), version=4),
        f"SKU-{number:06d}",
        f"{rng.choice(WORDS)} № {number} – {rng.choice(['éco', 'größe', 'ミニ', 'plus'])}",
        Decimal(rng.randint(100, 9_999_999)) / 10_000,
        None if rng.random() < 0.2 else rng.uniform(0.01, 80.0),
        bytes(rng.getrandbits(8) for _ in range(rng.randint(0, 24))) if rng.random() < 0.7 else None,
        rng.random() < 0.1,
        _stamp(rng, base).replace(microsecond=rng.randint(0, 999_999)),
    )


def order_row(rng: random.Random, order_id: int, customers: int, base: datetime) -> tuple[object, ...]:
    return (
        order_id,
        rng.randint(1, customers),
        (base - timedelta(days=rng.randint(0, 500))).date(),
        rng.choice(STATUSES),
        None if rng.random() < 0.5 else f"note {order_id}: «fragile»",
        Decimal(rng.randint(0, 100_000_000)) / 10_000,
        None if rng.random() < 0.15 else _stamp(rng, base),
    )


def create_and_fill(conn: psycopg.Connection, size: int, seed: int = 42) -> dict[str, int]:
    """Create the demo tables and fill them; `size` is the number of customers."""
    rng = random.Random(seed)
    base = datetime.utcnow().replace(microsecond=0) - timedelta(hours=1)
    conn.execute(DDL)
    counts: dict[str, int] = {}
    rows: dict[str, list[tuple[object, ...]]] = {
        "Countries": list(COUNTRIES),
        "Customers": [customer_row(rng, i, base) for i in range(1, size + 1)],
        "Products": [product_row(rng, i, base) for i in range(1, max(size // 2, 2) + 1)],
        "Orders": [order_row(rng, i, size, base) for i in range(1, 2 * size + 1)],
    }
    product_ids = [p[0] for p in rows["Products"]]
    rows["OrderLines"] = [
        (
            order[0],
            line,
            rng.choice(product_ids),
            rng.randint(1, 50),
            Decimal(rng.randint(100, 999_999)) / 100,
            None if rng.random() < 0.05 else _stamp(rng, base),
        )
        for order in rows["Orders"]
        for line in range(1, rng.randint(1, 4) + 1)
    ]
    for table, table_rows in rows.items():
        statement = sql.SQL("copy {}.{} from stdin").format(sql.Identifier(SCHEMA), sql.Identifier(table))
        with conn.cursor().copy(statement) as copy:
            for row in table_rows:
                copy.write_row(row)
        counts[table] = len(table_rows)
    conn.commit()
    return counts
