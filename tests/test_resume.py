"""A run killed after some pages goes on from its last recorded page, with the same watermark."""

from __future__ import annotations

from typing import Any

import pytest

from tests.conftest import Project
from tests.replica_check import assert_replicas_equal
from tests.test_ties import tied

__all__ = ["tied"]


class Killed(BaseException):
    """Stands in for kill -9: nothing in the extract gets to handle it."""


def test_killed_run_resumes_after_its_last_recorded_page(tied: Project) -> None:
    staging = f'"demo__{tied.source_db}__dbo".stg__tied'

    def die_during_page_four(event: str, details: dict[str, Any]) -> None:
        run = details["run"]
        if event == "page" and run.pages_landed == 3:
            with tied.target() as conn:  # page 4 half written when the process died
                conn.execute(
                    f"""insert into {staging} select region, id, val, modifieddate, _tidemark_run_id, 4
                    from {staging} where _tidemark_run_id = %s and _tidemark_page = 3 limit 2""",
                    (run.run_id,),
                )
            raise Killed

    with pytest.raises(Killed):
        tied.extract("dbo.Tied", observer=die_during_page_four)
    first = tied.scalar("select max(run_id) from _migration.run_log")
    assert tied.scalar("select rows_landed from _migration.run_log order by event_id desc limit 1") == 21

    events: list[str] = []
    result = tied.extract("dbo.Tied", observer=lambda event, details: events.append(event))[0]
    assert events[0] == "resume" and "watermark" not in events
    assert result.run_id == first
    assert result.rows_landed == 100  # 21 kept, 79 read after page 3; the half page was dropped
    tied.build()
    assert_replicas_equal(tied)
    assert tied.scalar("select run_ids from _migration.merge_log") == [first]
    assert tied.scalar("select rows_inserted from _migration.merge_log") == 100


def test_a_failed_run_is_not_resumed(tied: Project) -> None:
    def fail_on_page_two(event: str, details: dict[str, Any]) -> None:
        if event == "page" and details["run"].pages_landed == 2:
            raise RuntimeError("network reset")

    with pytest.raises(RuntimeError):
        tied.extract("dbo.Tied", observer=fail_on_page_two)
    events: list[str] = []
    result = tied.extract("dbo.Tied", observer=lambda event, details: events.append(event))[0]
    assert events[0] == "start"
    assert result.rows_landed == 100
    tied.build()
    assert_replicas_equal(tied)
