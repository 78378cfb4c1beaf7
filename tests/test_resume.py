"""A run killed after some partitions landed goes on with the rest, with the same watermark."""

from __future__ import annotations

import pytest

from extract.core.observer import ClockRead, Event, PartitionLanded, Planned, RunBegan
from extract.sync_table import sync_table
from tests.conftest import Project
from tests.replica_check import assert_replicas_equal
from tests.test_ties import tied

__all__ = ["tied"]


class Killed(BaseException):
    """Stands in for kill -9: nothing in the extract gets to handle it."""


def landed_partitions(project: Project, run_id: int) -> dict[int, object]:
    with project.target() as conn:
        rows = conn.execute(
            "select partition_no, landed_at from _migration.partition_log where run_id = %s and landed_at is not null",
            (run_id,),
        ).fetchall()
    return {number: at for number, at in rows}


@pytest.mark.parametrize("first_sync", [True, False], ids=["first-sync-table", "staging"])
def test_killed_run_resumes_with_the_partitions_not_landed(tied: Project, first_sync: bool) -> None:
    schema = f'"demo__{tied.source_db}__dbo"'
    staging = f"{schema}.stg__tied"
    holder = tied.target()
    holder.autocommit = False

    def hold_partitions_8_and_up(event: Event) -> None:
        if isinstance(event, Planned) and not first_sync:
            # A replica with a row (as after an earlier sync) makes the run land in staging, where
            # each row names its partition; the full run's merge deletes the row.
            with tied.target() as conn:
                conn.execute(f"insert into {schema}.tied values ('gone', 0, 'x', null)")
        if isinstance(event, Planned):
            # Their tasks copy their rows, then wait to mark the partition landed: the cores fill up.
            holder.execute(
                "select 1 from _migration.partition_log where run_id = %s and partition_no >= 8 for update",
                (event.run.run_id,),
            )
        if isinstance(event, PartitionLanded) and first_sync:
            assert tied.scalar(f"select count(*) from {schema}.stg_first__tied") > 0
            raise Killed
        if isinstance(event, PartitionLanded):
            with tied.target() as conn:  # a partition half written when the process died
                half = conn.execute(
                    f"""insert into {staging} select region, id, val, modifieddate, _tidemark_run_id, 999
                    from {staging} where _tidemark_run_id = %s limit 2""",
                    (event.run.run_id,),
                )
                assert half.rowcount == 2
            raise Killed

    with pytest.raises(Killed):
        tied.extract("dbo.Tied", observer=hold_partitions_8_and_up)
    with tied.target() as conn:  # the waiting tasks die with the process
        conn.execute(
            "select pg_terminate_backend(pid) from pg_stat_activity"
            " where wait_event_type = 'Lock' and datname = current_database()"
        )
    holder.rollback()
    holder.close()
    first = tied.scalar("select max(run_id) from _migration.run_log")
    assert tied.scalar("select status from _migration.run_log order by event_id desc limit 1") == "running"
    before = landed_partitions(tied, first)
    assert before and max(before) < 8

    events: list[Event] = []
    result = tied.extract("dbo.Tied", observer=events.append)[0]
    assert isinstance(events[0], RunBegan) and events[0].resumed
    assert not any(isinstance(e, ClockRead | Planned) for e in events)
    assert result.run_id == first
    assert result.rows_landed == 100  # the half partition was dropped; a repeat would fail the key check
    after = landed_partitions(tied, first)
    assert len(after) == 15
    assert {n: after[n] for n in before} == before  # landed partitions were not read again
    tied.merge()
    assert_replicas_equal(tied)
    assert tied.scalar("select run_ids from _migration.merge_log") == [first]
    assert tied.scalar("select rows_inserted from _migration.merge_log") == 100


def test_a_failed_run_is_not_resumed(tied: Project) -> None:
    def fail_once_a_partition_landed(event: Event) -> None:
        if isinstance(event, PartitionLanded):
            raise RuntimeError("network reset")

    with pytest.raises(RuntimeError, match="network reset"):
        tied.extract("dbo.Tied", observer=fail_once_a_partition_landed)
    assert tied.scalar("select status from _migration.run_log order by event_id desc limit 1") == "failed"
    events: list[Event] = []
    result = tied.extract("dbo.Tied", observer=events.append)[0]
    assert isinstance(events[0], RunBegan) and not events[0].resumed
    assert result.rows_landed == 100
    tied.merge()
    assert_replicas_equal(tied)


def test_a_killed_full_run_is_not_resumed_by_a_full_refresh(tied: Project) -> None:
    """A killed run that merges into the replica and a --full-refresh that replaces it land in different
    tables: the refresh starts anew and reads every row."""
    tied.sync_replicas()
    with tied.target() as conn:  # as `state reset` leaves it: the next run reads every row, into staging
        conn.execute("update _migration.stream_state set cursor_value = null")

    def kill_after_a_partition(event: Event) -> None:
        if isinstance(event, PartitionLanded):
            raise Killed

    with pytest.raises(Killed):
        tied.extract("dbo.Tied", observer=kill_after_a_partition)
    killed = tied.scalar("select max(run_id) from _migration.run_log")
    planner = tied.planner
    result = sync_table(planner.context, planner.plan(planner.find("dbo.Tied")), refresh=True)
    assert result.run_id != killed and result.rows_landed == 100
    assert tied.scalar("select count(*) from _migration.runs where run_id = %s and status = 'failed'", (killed,)) == 1
