"""A partition read that fails on a transient error (here the source's backend killed while it reads) is
tried again with backoff and a smaller page, logged in the run log; killed at every attempt, the run fails
after the bounded retries with one line naming the error."""

from __future__ import annotations

import pytest

from extract.core.observer import Event, Retrying
from tests.backend_killer import BackendKiller
from tests.conftest import Project
from tests.items_table import create_items
from tests.replica_check import assert_replicas_equal

ROWS = 40


@pytest.fixture
def items(project: Project) -> Project:
    create_items(project, ROWS)
    project.write_sync_tables(["dbo,Items,ModifiedDate,,true"])
    project.env.update({"TIDEMARK_READ_RETRIES": "2", "TIDEMARK_RETRY_BACKOFF": "1s"})
    project.generate()
    return project


def _run_log(project: Project) -> list[tuple[str, str | None]]:
    with project.target() as conn:
        rows = conn.execute(
            "select status, error_message from _migration.run_log"
            " where run_id = (select max(run_id) from _migration.run_log) order by event_id"
        ).fetchall()
    return [(str(r[0]), r[1]) for r in rows]


@pytest.mark.parametrize("partition_rows", [None, "10"], ids=["driver", "spark"])
def test_a_backend_killed_once_is_read_again_after_one_logged_retry(items: Project, partition_rows: str | None) -> None:
    if partition_rows is not None:
        items.env["PARTITION_ROWS"] = partition_rows  # partitions of a fixed size are read by Spark
    killer = BackendKiller(items, kills=1)
    events: list[Event] = []

    def observe(event: Event) -> None:
        events.append(event)
        killer(event)

    result = items.extract(observer=observe)[0]
    killer.join()
    assert killer.killed == 1
    assert result.rows_landed == ROWS
    retries = [e for e in events if isinstance(e, Retrying)]
    assert [(e.attempt, e.attempts) for e in retries] == [(1, 2)]
    assert "terminating connection due to administrator command" in retries[0].error
    log = _run_log(items)
    logged = [message for _, message in log if message and message.startswith("retry 1 of 2 in 1s, 5,000 rows a fetch")]
    assert len(logged) == 1, log
    assert log[-1] == ("landed", None)
    items.merge()
    assert_replicas_equal(items)


def test_a_backend_killed_at_every_attempt_fails_the_run_with_one_line(items: Project) -> None:
    killer = BackendKiller(items, kills=3)  # the first attempt and both retries
    with pytest.raises(Exception) as failure:
        items.extract(observer=killer)
    killer.join()
    assert killer.killed == 3
    log = _run_log(items)
    assert [m.split(",")[0] for _, m in log if m and m.startswith("retry")] == [
        "retry 1 of 2 in 1s",
        "retry 2 of 2 in 2s",
    ]
    status, message = log[-1]
    assert status == "failed" and message is not None
    assert "\n" not in message and "terminating connection due to administrator command" in message
    assert "terminating connection" in str(failure.value)
    assert items.scalar("select count(*) from _migration.stream_state") == 0  # nothing committed
