"""Watermarks at the source's precision: a row stamped in the watermark's tick is never lost."""

from __future__ import annotations

import pytest

from tests.conftest import Project
from tests.replica_check import assert_replicas_equal

CURSOR_TYPES = {
    "Daily": "date",
    "Seconds": "timestamp(0)",
    "Millis": "timestamp(3)",
    "Micros": "timestamp(6)",
    "Zoned": "timestamp(6) with time zone",
}


@pytest.fixture
def tables(project: Project) -> Project:
    with project.source() as conn:
        conn.execute("create schema dbo")
        for name, cursor_type in CURSOR_TYPES.items():
            conn.execute(
                f'create table dbo."{name}" ("Id" integer primary key, "Val" text, "ModifiedDate" {cursor_type})'
            )
            conn.execute(
                f"""insert into dbo."{name}" select i, 'v' || i, now() - interval '3 days'
                from generate_series(1, 5) as i"""
            )
    project.write_sync_tables([f"dbo,{name},,,true" for name in CURSOR_TYPES])
    project.generate()
    project.sync_replicas()
    return project


def test_row_stamped_at_the_watermark_survives_rounding_and_truncation(tables: Project) -> None:
    with tables.target() as conn:
        watermarks = dict(
            conn.execute("select source_table, last_sync_watermark from _migration._migration_state").fetchall()
        )
    with tables.source() as conn:
        for name, cursor_type in CURSOR_TYPES.items():
            stamp = "cast(%s || '+00' as timestamptz)" if "time zone" in cursor_type else "cast(%s as timestamp)"
            # Stored at the column's precision: rounded to the second or millisecond, cut to the day.
            conn.execute(
                f"""update dbo."{name}" set "Val" = 'at the watermark', "ModifiedDate" = cast({stamp} as {cursor_type})
                where "Id" = 1""",
                (watermarks[name],),
            )
    tables.sync_replicas()
    for name in CURSOR_TYPES:
        replica = f'"demo__{tables.source_db}__dbo".{name.lower()}'
        assert tables.scalar(f"select val from {replica} where id = 1") == "at the watermark", name
    assert_replicas_equal(tables)
