"""Ties on the cursor: partitions in (cursor, key) order never skip a row or read one twice."""

from __future__ import annotations

import json

import pytest

from tests.conftest import Project
from tests.replica_check import assert_replicas_equal

TIE = "timestamp '2026-11-01 08:00:00'"


@pytest.fixture
def tied(project: Project) -> Project:
    project.env["PARTITION_ROWS"] = "7"
    with project.source() as conn:
        conn.execute("create schema dbo")
        conn.execute(
            """create table dbo."Tied" ("Region" varchar(10), "Id" integer, "Val" text, "ModifiedDate" timestamp(3),
            primary key ("Region", "Id"))"""
        )
        # 100 rows share one cursor value; keys include quotes and brackets; some cursors are NULL.
        conn.execute(
            f"""insert into dbo."Tied"
            select (array['o''hara', 'a]b', 'zeta', 'Ärger'])[1 + i % 4], i, 'v' || i,
                case when i % 10 = 0 then null else {TIE} end
            from generate_series(1, 100) as i"""
        )
    project.write_sync_tables(["dbo,Tied,,,true"])
    project.generate()
    return project


def run_events(project: Project) -> list[tuple[int, str, int, int, str | None]]:
    with project.target() as conn:
        return [
            tuple(r)
            for r in conn.execute(
                "select run_id, status, partitions_landed, rows_landed, partition_positions from _migration.run_log"
                " where status <> 'failed' and partitions_landed is not null order by event_id"
            ).fetchall()
        ]


def test_full_read_partitions_by_key_without_loss_or_repeat(tied: Project) -> None:
    result = tied.extract("dbo.Tied")[0]
    assert result.rows_landed == 100  # a row read twice would have failed the duplicate-key check
    landed = [e for e in run_events(tied) if e[1] == "landed"]
    assert landed[-1][2] == 15  # cut after rows 7, 14, ..., 98
    tied.merge()
    assert_replicas_equal(tied)


def test_incremental_partitions_through_a_tie_and_null_cursors(tied: Project) -> None:
    tied.sync_replicas()
    with tied.source() as conn:
        # Every changed row gets the very same new stamp: one big tie across many pages.
        conn.execute(
            """update dbo."Tied" set "Val" = 'tied ' || "Id",
            "ModifiedDate" = cast(clock_timestamp() at time zone 'UTC' as timestamp(3))
            where "Id" % 3 = 0"""
        )
        conn.execute("""update dbo."Tied" set "Val" = 'null ' || "Id" where "ModifiedDate" is null""")
    result = tied.extract("dbo.Tied")[0]
    # Ids 30, 60 and 90 had NULL cursors and now carry the stamp: 33 changed, 7 still NULL.
    changed, nulls = 33, 7
    assert result.rows_landed == changed + nulls
    tied.merge()
    assert_replicas_equal(tied)
    state = tied.scalar("select partition_positions from _migration._migration_state where source_table = 'Tied'")
    position = json.loads(state)
    assert position == {"segment": "null cursor", "partition": 6, "through": None}  # every partition landed
    info = json.loads(tied.scalar("select partition_info from _migration._migration_state"))
    # 33 changed rows cut every 7 rows: 5 partitions; the 7 NULL-cursor rows: 1.
    assert info == {"partitions_planned": 5 + 1, "partitions_landed": 6, "rows_planned": 40, "rows_landed": 40}
