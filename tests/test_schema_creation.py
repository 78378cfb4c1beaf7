"""A pass creates the schemas it lands in while dbt's run may create the same ones: the second of two
sessions creating a schema at the same moment is refused as a duplicate by PostgreSQL, and the landing
takes that as the schema found (extract/landing/staging.py's `create_schema`)."""

from __future__ import annotations

import threading

import psycopg

from extract.landing.staging import create_schema
from tests.conftest import Project


def test_a_schema_created_meanwhile_by_another_session_is_taken_as_found(project: Project) -> None:
    with project.target() as other, psycopg.connect(project.target_url) as landing:
        other.execute("begin")
        other.execute("create schema raced")  # not committed yet: the landing's creation waits for it
        failures: list[BaseException] = []

        def land() -> None:
            try:
                with landing.transaction():
                    create_schema(landing, "raced")
                    landing.execute("create table raced.landed (x integer)")
            except BaseException as exc:
                failures.append(exc)

        thread = threading.Thread(target=land)
        thread.start()
        thread.join(1.0)
        assert thread.is_alive()  # waiting on the other session's schema
        other.execute("commit")
        thread.join(30)
        assert not failures, failures
    assert project.scalar("select to_regclass('raced.landed') is not null") is True
