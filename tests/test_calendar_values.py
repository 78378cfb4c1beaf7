"""Every date and date-time SQL Server can hold lands exactly: 0001-01-01 to 9999-12-31 23:59:59.999999,
the ten days of October 1582 included (Java's legacy date types use the Julian calendar before
1582-10-15, where those days do not exist), read by Spark in partitions or landed by the driver, in
COPY's binary and text formats; verify agrees."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import psycopg
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from psycopg import sql

from extract.project.verify import verify_tables
from tests.conftest import Project

COLUMNS = ("Day", "At", "Ms", "Tz")
# Binary: every column has an exact binary form. Text: a time column sends the batch through COPY's text format.
TABLES = {
    "Binary": '"Id" bigint primary key, "Day" date, "At" timestamp(6), "Ms" timestamp(3), "Tz" timestamptz(6)',
    "Text": '"Id" bigint primary key, "Day" date, "At" timestamp(6), "Ms" timestamp(3), "Tz" timestamptz(6),'
    ' "Clock" time(6)',
}
PARTITION_ROWS = 40  # a batch of more rows is read by Spark in partitions, a smaller one by the driver

SWITCH = datetime(1582, 10, 5)
EVERY_VALUE = st.datetimes(min_value=datetime(1, 1, 1), max_value=datetime(9999, 12, 31, 23, 59, 59, 999999))
# The calendar switch is a tiny part of the range: drawn on purpose, with its neighbours.
NEAR_THE_SWITCH = st.builds(
    lambda days, micros: SWITCH + timedelta(days=days, microseconds=micros),
    st.integers(min_value=-2, max_value=12),
    st.integers(min_value=0, max_value=86_400_000_000 - 1),
)
BATCHES = st.lists(st.one_of(EVERY_VALUE, NEAR_THE_SWITCH), min_size=1, max_size=120)

GAP = [datetime(1582, 10, day, 12, 0, 0, 1) for day in range(5, 15)]
EDGES = [datetime(1, 1, 1), datetime(9999, 12, 31, 23, 59, 59, 999999), datetime(1582, 10, 4, 23, 59, 59, 999999)]


def _text(url: str, table: tuple[str, str], columns: list[str], where: str = "") -> list[tuple[str | None, ...]]:
    """The rows as text (the key first, then COLUMNS) in UTC, in the key's order."""
    select = sql.SQL(", ").join(sql.SQL("{}::text").format(sql.Identifier(c)) for c in columns)
    query = sql.SQL("select {} from {}.{} where {} order by 1").format(
        select, sql.Identifier(table[0]), sql.Identifier(table[1]), sql.SQL(where or "true")
    )
    with psycopg.connect(url) as conn:
        conn.execute("set timezone = 'UTC'")
        return conn.execute(query).fetchall()


def test_every_calendar_value_lands_exactly(project: Project) -> None:
    project.env["PARTITION_ROWS"] = str(PARTITION_ROWS)
    with project.source() as conn:
        conn.execute("create schema dbo")
        for name, columns in TABLES.items():
            conn.execute(sql.SQL("create table dbo.{} ({})").format(sql.Identifier(name), sql.SQL(columns)))
    project.write_sync_tables([f"dbo,{name},,,true" for name in TABLES])
    project.generate()
    next_id = iter(range(1, 1_000_000))

    @settings(max_examples=6, deadline=None, suppress_health_check=list(HealthCheck), database=None)
    @given(batch=BATCHES)
    @example(batch=GAP + EDGES)
    @example(batch=(GAP + EDGES) * 5)
    def lands_exactly(batch: list[datetime]) -> None:
        rows = [(next(next_id), value) for value in batch]
        with project.source() as conn:
            for name in TABLES:
                extra = ", time '23:59:59.999999'" if name == "Text" else ""
                with conn.cursor() as cursor:
                    cursor.executemany(
                        sql.SQL("insert into dbo.{} values (%s, %s, %s, %s, %s{})").format(
                            sql.Identifier(name), sql.SQL(extra)
                        ),
                        [(i, v.date(), v, v, v.replace(tzinfo=UTC)) for i, v in rows],
                    )
        run_ids = {result.table: result.run_id for result in project.extract()}
        for name in TABLES:
            plan = project.planner.plan(project.planner.find(f"dbo.{name}"))
            replica_columns = [c.target_name for c in plan.columns][: len(COLUMNS) + 1]
            # A first sync lands in a table of its own, which holds its rows only, until the merge.
            first = project.scalar(
                "select to_regclass(%s)", (f'"{plan.names.schema}"."{plan.names.first_sync_table}"',)
            )
            landed = _text(
                project.target_url,
                (plan.names.schema, plan.names.first_sync_table if first else plan.names.staging_table),
                replica_columns,
                "" if first else f"_tidemark_run_id = {int(run_ids[f'dbo.{name}'])}",
            )
            assert landed == _text(project.source_url, ("dbo", name), ["Id", *COLUMNS])

    lands_exactly()

    project.build()
    plans = [project.planner.plan(c) for c in project.planner.enabled_tables()]
    for plan in plans:
        source = _text(project.source_url, ("dbo", plan.table.name), ["Id", *COLUMNS])
        replica_columns = [c.target_name for c in plan.columns][: len(COLUMNS) + 1]
        assert _text(project.target_url, (plan.names.schema, plan.names.table), replica_columns) == source
        assert ("1582-10-10",) in {(row[1],) for row in source}
    assert all(result.ok for result in verify_tables(project.planner, plans))
