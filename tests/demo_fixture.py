"""A project filled with the generated demo data, its dbt files generated."""

from __future__ import annotations

import pytest

from extract.devtools.demo.generator import create_and_fill
from tests.conftest import Project


@pytest.fixture
def demo(project: Project) -> Project:
    with project.source() as conn:
        create_and_fill(conn, size=60, seed=7)
    project.generate()
    return project


def merge_counts(project: Project, table: str) -> tuple[int, int, int, int]:
    """(inserted, updated, unchanged, deleted) of the table's latest merge."""
    with project.target() as conn:
        row = conn.execute(
            "select rows_inserted, rows_updated, rows_unchanged, rows_deleted from _migration.merge_log"
            " where table_key like %s order by merge_id desc limit 1",
            ("%." + table,),
        ).fetchone()
    assert row is not None, f"no merge logged for {table}"
    return (int(row[0]), int(row[1]), int(row[2]), int(row[3]))


def committed_watermark(project: Project, table: str) -> str | None:
    value = project.scalar(
        "select last_sync_watermark from _migration._migration_state where lower(source_table) = %s", (table,)
    )
    return None if value is None else str(value)


def refuse_credit_limit_change(project: Project, customer: int) -> str:
    """Make the next merge of dbo.Customers fail: the replica gets a CHECK constraint that the
    source's new credit limit for `customer` (stamped with the source's clock) breaks. Returns the replica."""
    replica = f'"demo__{project.source_db}__dbo".customers'
    with project.target() as conn:
        conn.execute(f"alter table {replica} add constraint limit_guard check (creditlimit < 1000000)")
    with project.source() as conn:
        conn.execute(
            """update dbo."Customers" set "CreditLimit" = 5000000,
                "ModifiedDate" = clock_timestamp() at time zone 'UTC'
            where "CustomerID" = %s""",
            (customer,),
        )
    return replica
