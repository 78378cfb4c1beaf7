"""Hostile names from the source catalog go the whole way (generate, extract, dbt build, verify, an
as-of history) as names: the replica is exact and nothing else in either database changes; a name
the replica cannot hold exactly is refused before anything is written."""

from __future__ import annotations

import csv
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, date, datetime
from pathlib import Path

import psycopg
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from psycopg import sql
from pyspark.sql import SparkSession

from extract.config.naming import RESERVED_COLUMNS, RESERVED_PREFIX, TargetNames, target_names
from extract.config.seeds import fold_name
from extract.core.errors import TidemarkError
from extract.core.observer import silent
from extract.core.quoting import ParameterSafeIdentifier
from extract.core.sql_contract import MAX_NAME_BYTES
from extract.project.verify import verify_tables
from extract.readers.asof_snapshot import SnapshotLanding
from tests.conftest import Project, new_project
from tests.replica_check import assert_replicas_equal

CANARY = "canary_seq"
#: What a name that tries to run as code, or to break quoting, is made of.
PARTS = [
    "'",
    '"',
    "]",
    "[",
    "\\",
    "$$",
    "{{ ",
    " }}",
    "{% ",
    " %}",
    "{#",
    "#}",
    "~",
    "--",
    ";",
    " ",
    "\t",
    "é",
    "名前",
    "\U0001f642",
    "Id",
    "x",
    "%s",
    "%",
    "?",
    "{}",
    "{{ run_query(\"select setval('canary_seq', 77)\") }}",
    "x'~run_query(\"select setval('canary_seq',77)\")~'",
    "\"; select setval('canary_seq', 77); --",
]
names = (
    st.lists(
        st.sampled_from(PARTS) | st.text(st.characters(codec="utf-8", exclude_characters="\x00"), max_size=3),
        min_size=1,
        max_size=4,
    )
    .map("".join)
    # The source is PostgreSQL too: it cuts a longer name itself, and keeps pg_ schemas for its own.
    .filter(lambda name: name.strip() != "" and len(name.encode()) <= MAX_NAME_BYTES and not name.startswith("pg_"))
)


@contextmanager
def scratch_project(admin_url: str, spark: SparkSession) -> Iterator[Project]:
    """A project of its own for one example, with a canary sequence in each database."""
    base = Path(tempfile.mkdtemp(prefix="tidemark-hostile-"))
    try:
        with new_project(base / "project", admin_url, spark) as project:
            project.env["PARTITION_ROWS"] = "3"  # several partitions: Spark reads with hostile key values at the edges
            for connect in (project.source, project.target):
                with connect() as conn:
                    conn.execute(f"create sequence {CANARY}")
                    conn.execute(f"select setval('{CANARY}', 5)")
            yield project
    finally:
        shutil.rmtree(base, ignore_errors=True)


def catalog(conn: psycopg.Connection) -> set[tuple[str, ...]]:
    """Every schema, relation and column outside the system schemas, and the canary's value."""
    rows = conn.execute(
        """
        select n.nspname, coalesce(c.relname, ''), coalesce(c.relkind::text, ''),
            coalesce(a.attname, ''), coalesce(format_type(a.atttypid, a.atttypmod), '')
        from pg_namespace as n
        left join pg_class as c on c.relnamespace = n.oid
        left join pg_attribute as a on a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped
        where n.nspname not like 'pg\\_%' and n.nspname <> 'information_schema'
        """
    ).fetchall()
    canary = conn.execute(f"select last_value from {CANARY}").fetchone()
    return {tuple(map(str, row)) for row in rows} | {("canary", str(canary[0] if canary else None))}


def create_source_table(project: Project, schema: str, table: str, key: str, others: list[str], cursor: str) -> None:
    """A table with a text key (hostile values too), some text columns and a timestamp cursor."""
    with project.source() as conn:
        conn.execute(sql.SQL("create schema if not exists {}").format(sql.Identifier(schema)))
        columns = [sql.SQL("{} text primary key").format(sql.Identifier(key))]
        columns += [sql.SQL("{} text").format(sql.Identifier(other)) for other in others]
        columns.append(sql.SQL("{} timestamp").format(sql.Identifier(cursor)))
        conn.execute(sql.SQL("create table {} ({})").format(sql.Identifier(schema, table), sql.SQL(", ").join(columns)))
        ref = ParameterSafeIdentifier(schema, table)
        values = ["a'b", "{{ x }}", "]]", "\\", "$$", "~;--", "名前", "z"]
        for number, value in enumerate(values):
            row = [value, *(f"{value} {i}" for i in range(len(others))), None if number == 3 else "2026-01-01"]
            conn.execute(
                sql.SQL("insert into {} values ({})").format(ref, sql.SQL(", ").join(sql.Placeholder() * len(row))),
                row,
            )


def write_seed(project: Project, schema: str, table: str, cursor: str) -> None:
    path = project.root / "seeds" / "sync_tables.csv"
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["source_schema", "source_table", "cursor_column", "primary_key", "enabled", "asof_history"])
        writer.writerow([schema, table, cursor, "", "true", "true"])
    project.close()


def acceptable(project: Project, schema: str, table: str, columns: list[str]) -> bool:
    """Whether the replica can hold these names exactly, by the documented rules."""
    names = target_names(project.settings.source, {"127.0.0.1": "demo"}, schema, table)
    replica_columns = [c.lower() for c in columns]
    return (
        all(len(n.encode()) <= MAX_NAME_BYTES for n in names.identifiers(asof_history=True))
        and all(len(c.encode()) <= MAX_NAME_BYTES for c in replica_columns)
        and len(set(replica_columns)) == len(replica_columns)
        and not any(c.startswith(RESERVED_PREFIX) or c in RESERVED_COLUMNS for c in replica_columns)
    )


def change_source(project: Project, schema: str, table: str, key: str, others: list[str], cursor: str) -> None:
    """An update that moves the cursor and an insert stamped now, for an incremental run."""
    safe_ref = ParameterSafeIdentifier(schema, table)
    with project.source() as conn:
        if others:
            conn.execute(
                sql.SQL("update {} set {} = 'changed', {} = clock_timestamp() at time zone 'UTC' where {} = %s").format(
                    safe_ref, ParameterSafeIdentifier(others[0]), sql.Identifier(cursor), ParameterSafeIdentifier(key)
                ),
                ("a'b",),
            )
        row = ["new '\"]", *("n" for _ in others), datetime.now(UTC).replace(tzinfo=None)]
        conn.execute(
            sql.SQL("insert into {} values ({})").format(safe_ref, sql.SQL(", ").join(sql.Placeholder() * len(row))),
            row,
        )


def land_history(project: Project, as_of: date) -> tuple[TargetNames, int]:
    """A snapshot of the source as of `as_of` lands, for the next build to apply: its table's names and rows."""
    landing = SnapshotLanding(project.planner, project.planner.enabled_tables()[0], as_of, None)
    return landing.plan.names, landing.run(silent).rows_landed


def check_history(project: Project, landed: tuple[TargetNames, int]) -> None:
    """The history holds each row of the snapshot applied last once."""
    names, rows = landed
    current = project.scalar(
        sql.SQL("select count(*) from {} where valid_to is null").format(
            sql.Identifier(names.schema, names.asof_history_table)
        )
    )
    assert current == rows > 0


def check_exact(project: Project) -> None:
    plans = [project.planner.plan(c) for c in project.planner.enabled_tables()]
    different = [v for v in verify_tables(project.planner, plans) if not v.ok]
    assert different == []
    assert assert_replicas_equal(project) > 0


def run_case(project: Project, schema: str, table: str, key: str, others: list[str], cursor: str) -> None:
    create_source_table(project, schema, table, key, others, cursor)
    write_seed(project, schema, table, cursor)
    with project.source() as conn:
        source_before = catalog(conn)
    with project.target() as conn:
        target_before = catalog(conn)
    if not acceptable(project, schema, table, [key, *others, cursor]):
        with pytest.raises(TidemarkError):
            project.generate()
            project.extract()
        with project.target() as conn:
            assert catalog(conn) == target_before
        return
    project.generate()
    project.extract()
    landed = land_history(project, date(2026, 1, 1))
    project.build()  # the sync's merge and the snapshot's, in one build
    check_exact(project)
    check_history(project, landed)
    change_source(project, schema, table, key, others, cursor)
    with project.source() as conn:
        source_changed = catalog(conn)
    # The first sync was read by Spark in partitions; this one, small, lands from the driver's JVM.
    del project.env["PARTITION_ROWS"]
    project.close()
    project.extract()
    landed = land_history(project, date(2026, 1, 2))
    project.build()
    check_exact(project)
    check_history(project, landed)
    with project.source() as conn:
        assert catalog(conn) == source_changed == source_before
    with project.target() as conn:
        after = catalog(conn)
    replica_schema = fold_name("demo") + "__" + fold_name(project.source_db) + "__" + fold_name(schema)
    added = {row for row in after - target_before if row[0] not in {"_migration", replica_schema}}
    assert added == set(), f"the target changed outside the replica's schema and _migration: {added}"
    assert target_before - after == set(), "something that was in the target changed or went"


@pytest.fixture(scope="module")
def admin(pg_admin_url: str) -> str:
    return pg_admin_url


@settings(
    max_examples=8,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.filter_too_much],
)
@example(schema="dbo", table='We"ird]Tab[le', key='i"d]', others=["x'~run_query(\"select setval('canary_seq',77)\")~'"])
@example(schema="Sales", table="T", key="{{ run_query(\"select setval('canary_seq', 77)\") }}", others=["{% if %}"])
@example(schema="dbo", table="Users", key="Id", others=["Name", "name"])
@example(schema="dbo", table="x" * 50, key="Id", others=["y" * 63])
@given(schema=names, table=names, key=names, others=st.lists(names, max_size=3))
def test_hostile_names_replicate_exactly_or_are_refused(
    admin: str, spark: SparkSession, schema: str, table: str, key: str, others: list[str]
) -> None:
    columns = [key, *others]
    if len({*columns, "LastChange"}) != len(columns) + 1:
        return  # the source itself cannot hold two columns of one name
    with scratch_project(admin, spark) as project:
        run_case(project, schema, table, key, others, "LastChange")
