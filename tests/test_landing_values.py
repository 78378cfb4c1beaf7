"""Values at the edges of their types land exactly, in COPY's binary format and in its text format, whether
Spark reads the batch in partitions or the driver lands it whole."""

from __future__ import annotations

import pytest

from extract.partitions.plan import Partition
from extract.readers.read_start import read_segments
from tests.conftest import Project

COLUMNS = """
    "Id" bigint primary key,
    "I" integer,
    "S" smallint,
    "B" boolean,
    "Wide" numeric(38, 10),
    "Money" numeric(12, 2),
    "Whole" numeric(18, 0),
    "Frac" numeric(18, 16),
    "D" double precision,
    "R" real,
    "Day" date,
    "Ts" timestamp(6),
    "Ms" timestamp(3),
    "Tz" timestamp(6) with time zone,
    "Tx" text,
    "Vc" varchar(20),
    "Ch" char(5),
    "By" bytea,
    "Jb" jsonb,
    "Js" json
"""

ROWS = [
    # Every column NULL but the key.
    "(1, " + ", ".join(["null"] * 19) + ")",
    "(2, -2147483648, 32767, true, 1234567890123456789012345678.0123456789, -0.05, 999999999999999999,"
    " 99.9999999999999999,"
    " 'NaN', 'Infinity', '0001-01-01', '1969-12-31 23:59:59.999999', '2026-11-23 01:02:03.456',"
    " '2000-01-01 00:00:00+05', E'a\\tb\\nc\\\\d\\re \u00fcn\u00ef \U0001f600', '', 'ab', '\\x00ff10',"
    """ '{"a": [1, 2.5, null], "b": "x\\ty"}', '{"z":1,  "a":2}')""",
    "(3, 2147483647, -32768, false, -0.0000000001, 0, -1, -0.0000000000000001, '-Infinity', -3.4e38, '9999-12-31',"
    " '0001-01-01 00:00:00', '1900-02-28 23:59:59.999', '1970-01-01 00:00:00+00', E'\\\\N', 'NULL', 'abcde',"
    " '\\x', 'null', '[]')",
    "(4, 0, 0, true, 0, 1234567890.99, 10000, 0, 0.1, 0.1, '2000-01-01', '2000-01-01 00:00:00',"
    " '2000-01-01 00:00:00.001', '2262-04-11 23:47:16.854775+00', 'plain', 'x', 'a', '\\xdeadbeef',"
    """ '{"n": 1e400}', '"s"')""",
    "(-9223372036854775808, 1, 1, false, 99999999999999999999999999.9999999999, -9999999999.99,"
    " -999999999999999999, -12.0000000000010025, -1.5e300, 1.17549435e-38, '1582-10-15', '1582-10-04 12:00:00',"
    " '9999-12-31 23:59:59.999', '9999-12-31 23:59:59.999999+00', repeat('long ', 10000), 'tab\tin',"
    " ' ', decode(repeat('ab', 100000), 'hex'), '{}', '{}')",
]


@pytest.fixture(params=["driver", "spark"])
def edge_tables(project: Project, request: pytest.FixtureRequest) -> Project:
    if request.param == "spark":
        project.env["PARTITION_ROWS"] = "2"  # 3 partitions of the 5 rows: Spark reads them
    with project.source() as conn:
        conn.execute("create schema dbo")
        # Values: every binary-capable type. Timed: the same plus a time column, which only
        # COPY's text format takes (time is read as text).
        conn.execute(f'create table dbo."Values" ({COLUMNS})')
        conn.execute(f'create table dbo."Timed" ({COLUMNS}, "At" time(6))')
        conn.execute(f'insert into dbo."Values" values {", ".join(ROWS)}')
        conn.execute('insert into dbo."Timed" select v.*, time \'23:59:59.999999\' from dbo."Values" as v')
    project.write_sync_tables(["dbo,Values,,,true", "dbo,Timed,,,true"])
    project.generate()
    project.sync()
    landed_by = project.scalar("select array_agg(distinct landed_by) from _migration.run_log")
    assert landed_by == [request.param, None]  # None: the runs' first events, before planning
    return project


def _as_text(project: Project, url: str, schema: str, table: str, columns: list[str]) -> list[tuple[str | None, ...]]:
    """Each value as Postgres prints it: NaN equals NaN, and every digit counts."""
    import psycopg
    from psycopg import sql

    select = sql.SQL(", ").join(sql.SQL("{}::text").format(sql.Identifier(c)) for c in columns)
    query = sql.SQL("select {} from {}.{} order by 1").format(select, sql.Identifier(schema), sql.Identifier(table))
    with psycopg.connect(url) as conn:
        return conn.execute(query).fetchall()


@pytest.mark.parametrize(("table", "expected_format"), [("dbo.Values", "binary"), ("dbo.Timed", "text")])
def test_edge_values_land_exactly(edge_tables: Project, table: str, expected_format: str) -> None:
    planner = edge_tables.planner
    plan = planner.plan(planner.find(table))
    segment = read_segments(planner.context, plan, None)[0]
    frame, _ = planner.context.partition_source(plan.table, plan.columns).frames(
        [segment], [Partition(1, segment.name, None, None)]
    )
    # The format the landing classes choose: binary when every column has an exact binary form.
    jvm = frame.sparkSession.sparkContext._jvm
    types = frame.sparkSession.sparkContext._gateway.new_array(jvm.String, len(plan.columns))
    for i, column in enumerate(plan.columns):
        types[i] = column.target_type
    assert jvm.tidemark.landing.CopyLanding.format(frame._jdf, types) == expected_format

    source = _as_text(
        edge_tables, edge_tables.source_url, plan.table.schema, plan.table.name, [c.source.name for c in plan.columns]
    )
    replica = _as_text(
        edge_tables, edge_tables.target_url, plan.names.schema, plan.names.table, [c.target_name for c in plan.columns]
    )
    assert len(source) == len(ROWS)
    for source_row, replica_row in zip(source, replica, strict=True):
        assert replica_row == source_row
