"""A table whose rows to read are only those of its safety window (or of NULL cursor), each already in the
replica as it is, is found unchanged: the pass compares them with the replica instead of reading and
merging them again. Any row that differs, however its cursor stands, runs the table."""

from __future__ import annotations

import json
import time

from tests.conftest import Project
from tests.replica_check import assert_replicas_equal

#: Passes read an hour back from their watermark: every row of this test is inside the window.
WINDOW = ("--safety-window", "1h")


def _status(project: Project, window: tuple[str, str] = WINDOW) -> str:
    done = project.cli("--all", "--dbt", "build", "--json", *window)
    assert done.returncode == 0, done.stderr[-3000:]
    (entry,) = json.loads(done.stdout)["tables"]
    return str(entry["status"])


def _source(project: Project, statement: str) -> None:
    with project.source() as conn:
        conn.execute(statement)


def _late_commit(project: Project, key: int) -> None:
    """Row `key` changed and stamped a minute before the watermark: committed after the last run read."""
    watermark = project.scalar("select cursor_value from _migration.stream_state")
    with project.source() as conn:
        conn.execute(
            """update dbo."Items" set "Name" = 'late', "ModifiedDate" = cast(%s as timestamp) - interval '1 minute'
            where "Id" = %s""",
            (watermark, key),
        )


def test_rows_read_again_in_the_window_are_compared_with_the_replica(project: Project) -> None:
    _source(project, "create schema dbo")
    _source(
        project,
        'create table dbo."Items" ("Region" varchar(8), "Id" integer, "Name" text, "Price" numeric(10, 2),'
        ' "Ratio" double precision, "Due" date, "Flag" boolean, "Ref" uuid, "ModifiedDate" timestamp(3),'
        ' primary key ("Region", "Id"))',
    )
    _source(
        project,
        """insert into dbo."Items" select case when i % 2 = 0 then 'north' else 'south' end, i,
            case when i % 7 = 0 then null else 'item ' || i end, i * 1.25, i / 3.0,
            date '2026-01-01' + i, i % 3 = 0, md5(i::text)::uuid, clock_timestamp()
        from generate_series(1, 300) as i""",
    )
    project.write_sync_tables(["dbo,Items,ModifiedDate,,true"])
    project.generate()
    assert _status(project) == "landed"
    # Every row is in the window, and in the replica as it is: nothing to merge.
    assert _status(project) == "unchanged"

    # Stamped before the watermark, committed after the last run: a late commit into the window.
    _late_commit(project, 5)
    assert _status(project) == "landed"
    assert_replicas_equal(project)
    assert _status(project) == "unchanged"

    # Changed under the same stamp (a tie in the cursor's precision): the row differs, the table runs.
    _source(project, """update dbo."Items" set "Price" = "Price" + 1, "Flag" = null where "Id" = 6""")
    assert _status(project) == "landed"
    assert_replicas_equal(project)

    # A row of NULL cursor is read on every run: compared too, and changed without a stamp, it runs.
    _source(project, """insert into dbo."Items" ("Region", "Id", "Name") values ('west', 1000, 'no stamp')""")
    assert _status(project) == "landed"
    assert _status(project) == "unchanged"
    _source(project, """update dbo."Items" set "Name" = 'still no stamp' where "Id" = 1000""")
    assert _status(project) == "landed"
    assert_replicas_equal(project)
    assert _status(project) == "unchanged"


_CLIENTS = """select count(*) from pg_stat_activity
    where datname = current_database() and pid <> pg_backend_pid() and backend_type = 'client backend'"""


def _replica_reads(project: Project, clients: int) -> int:
    """Scans of the replica so far, as the server counts them. Each pass's connections report theirs as
    their server processes end, which may be after the pass has: the reads wait until no more clients are
    connected than `clients` (those of the test itself)."""
    deadline = time.monotonic() + 30
    while project.scalar(_CLIENTS) > clients and time.monotonic() < deadline:
        time.sleep(0.05)
    return int(
        project.scalar(
            """select coalesce(sum(seq_scan + coalesce(idx_scan, 0)), 0) from pg_stat_user_tables
            where (schemaname, relname) in (select target_schema, target_table from _migration.run_log)"""
        )
    )


def _compared(project: Project) -> dict[str, object]:
    return dict(project.scalar("select compared from _migration.stream_checks"))


def test_a_comparison_stands_until_the_next_merge(project: Project) -> None:
    """The rows read again are compared with the replica once: the next checks ask the source for their
    count and hash sum alone, and read no replica row, until a merge changes the replica."""
    _source(project, "create schema dbo")
    _source(project, 'create table dbo."Items" ("Id" integer primary key, "Name" text, "ModifiedDate" timestamp(3))')
    _source(
        project,
        """insert into dbo."Items" select i, 'item ' || i, clock_timestamp() from generate_series(1, 200) as i""",
    )
    project.write_sync_tables(["dbo,Items,ModifiedDate,,true"])
    project.generate()
    clients = int(project.scalar(_CLIENTS))
    assert _status(project) == "landed"
    merged = project.scalar("select max(merge_id) from _migration.merge_log")

    before = _replica_reads(project, clients)
    assert _status(project) == "unchanged"
    compared = _compared(project)
    assert (compared["rows"], compared["last_merge"]) == (200, merged), compared
    assert _replica_reads(project, clients) > before  # the first check compares the rows with the replica's

    for window in (WINDOW, ("--safety-window", "0s"), WINDOW):
        # A pass past its window has nothing to compare: the comparison stays for the next within it.
        before = _replica_reads(project, clients)
        assert _status(project, window) == "unchanged"
        assert _replica_reads(project, clients) == before  # the source's figures alone
        assert _compared(project) == compared

    # A late commit changes the figures: the rows are compared again, differ, and the table runs.
    _late_commit(project, 7)
    assert _status(project) == "landed"
    assert_replicas_equal(project)

    # After that merge, the comparison recorded before no longer stands: the next check compares again.
    before = _replica_reads(project, clients)
    assert _status(project) == "unchanged"
    assert _replica_reads(project, clients) > before
    again = _compared(project)
    assert again["last_merge"] == project.scalar("select max(merge_id) from _migration.merge_log") != merged
    assert again["hash_sum"] != compared["hash_sum"]

    # A row deleted from the source leaves the rows read again: their figures change, and the comparison
    # that follows finds the rest in the replica (a delete is a reconcile's to find).
    _source(project, """delete from dbo."Items" where "Id" = 9""")
    assert _status(project) == "unchanged"
    assert _compared(project)["rows"] == 199
