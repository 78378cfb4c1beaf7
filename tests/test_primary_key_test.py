"""The replicas' key test (dbt_package/macros/generic_tests/test_tidemark_primary_key.sql): answered by the
primary key constraint when the replica has one on exactly the key, by a scan of the table otherwise."""

from __future__ import annotations

import json
from collections.abc import Iterator

import psycopg
import pytest

from tests.conftest import Project

CALL = "{{ tidemark.test_tidemark_primary_key('keys.%s', %s) }}"


@pytest.fixture
def conn(project: Project) -> Iterator[psycopg.Connection]:
    with psycopg.connect(project.target_url, autocommit=True) as connection:
        connection.execute("create schema keys")
        yield connection


def _test_sql(project: Project, table: str, key: list[str]) -> str:
    return project.dbt("compile", "--quiet", "--inline", CALL % (table, json.dumps(key))).stdout.strip()


def _failures(conn: psycopg.Connection, test_sql: str) -> list[tuple[object, ...]]:
    return conn.execute(test_sql).fetchall()


def _scanned(conn: psycopg.Connection, test_sql: str) -> bool:
    """Whether running the test read any row of the table."""
    plan = conn.execute("explain (analyze, format json) " + test_sql).fetchone()
    assert plan is not None

    def walk(node: dict[str, object]) -> bool:
        children = node.get("Plans", [])
        assert isinstance(children, list)
        here = node.get("Relation Name") == "items" and node.get("Actual Loops", 0) != 0
        return here or any(walk(child) for child in children)

    return walk(plan[0][0]["Plan"])


def test_a_primary_key_constraint_answers_the_test_without_reading_the_table(
    project: Project, conn: psycopg.Connection
) -> None:
    conn.execute(
        'create table keys.items (id integer, "Line ""No""" integer, val text, primary key (id, "Line ""No"""))'
    )
    conn.execute("insert into keys.items select i, i % 3, 'v' from generate_series(1, 5000) as i")
    enforced = _test_sql(project, "items", ["id", 'Line "No"'])
    assert _failures(conn, enforced) == []
    assert not _scanned(conn, enforced)

    # A key the constraint is not exactly (a part of it) is checked by reading the rows.
    part = _test_sql(project, "items", ['Line "No"'])
    assert _scanned(conn, part)
    assert sorted(row[0] for row in _failures(conn, part)) == [0, 1, 2]


def test_without_a_constraint_the_test_finds_repeated_and_null_keys(project: Project, conn: psycopg.Connection) -> None:
    conn.execute("create table keys.items (id integer, val text)")
    conn.execute("insert into keys.items values (1, 'a'), (2, 'b'), (3, 'c')")
    test_sql = _test_sql(project, "items", ["id"])
    assert _failures(conn, test_sql) == []
    assert _scanned(conn, test_sql)

    conn.execute("insert into keys.items values (2, 'again'), (null, 'no key')")
    assert sorted(_failures(conn, test_sql), key=str) == [(2, 2), (None, 1)]

    # A primary key added later answers it again; one dropped makes it read the table once more.
    conn.execute("delete from keys.items where val in ('again', 'no key')")
    conn.execute("alter table keys.items add constraint items_pk primary key (id)")
    assert not _scanned(conn, test_sql)
    conn.execute("alter table keys.items drop constraint items_pk")
    assert _scanned(conn, test_sql)
