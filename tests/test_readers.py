"""Seed 001's tests, per reader: it respects the input state and reads nothing older; its output state is
what it says; the safety window applies when configured; and one full incremental cycle and one retry
cycle (the source's backend killed while a partition is read) through the whole lifecycle, the replica
exact after each."""

from __future__ import annotations

from datetime import date, datetime, timedelta
from typing import Any

import pytest

from extract.core.observer import Event, Retrying
from extract.readers.asof_snapshot import SnapshotLanding
from extract.readers.reconcile_repairs import reconcile_table
from extract.reconcile.result import ReconcileOptions
from tests.backend_killer import BackendKiller
from tests.conftest import Project
from tests.items_table import create_items
from tests.replica_check import assert_replicas_equal

ROWS = 30


def _table(project: Project, seed_row: str, rowversion: bool = False) -> Project:
    create_items(project, ROWS, rowversion=rowversion)
    (project.root / "seeds" / "sync_tables.csv").write_text(
        "source_schema,source_table,cursor_column,primary_key,enabled,asof_history\n" + seed_row + "\n"
    )
    project.close()
    project.env.update({"TIDEMARK_READ_RETRIES": "1", "TIDEMARK_RETRY_BACKOFF": "0s"})
    project.generate()
    return project


@pytest.fixture
def clocked(project: Project) -> Project:
    return _table(project, "dbo,Items,ModifiedDate,,true,true")


@pytest.fixture
def versioned(project: Project) -> Project:
    return _table(project, "dbo,Items,,,true,false", rowversion=True)


@pytest.fixture
def plain(project: Project) -> Project:
    project.env["DATE_UPDATED_FIELD"] = "LastEditedWhen"  # not a column of it: no cursor, read whole
    return _table(project, "dbo,Items,,,true,false")


def _touch(project: Project, item: int, stamp: str = "clock_timestamp() at time zone 'UTC'") -> None:
    with project.source() as conn:
        conn.execute(f"""update dbo."Items" set "Val" = 'changed', "ModifiedDate" = {stamp} where "Id" = %s""", (item,))


def _retry_cycle(project: Project, run: Any) -> Any:
    """`run(observer)` with the source's backend killed once while it reads: one retry, then success."""
    killer = BackendKiller(project, kills=1)
    retries: list[Event] = []

    def observe(event: Event) -> None:
        if isinstance(event, Retrying):
            retries.append(event)
        killer(event)

    result = run(observe)
    killer.join()
    assert killer.killed == 1 and len(retries) == 1
    return result


def test_clock_watermark_reads_from_its_input_state_and_says_what_it_read(clocked: Project) -> None:
    first = clocked.extract()[0]
    assert first.input_state is None and first.output_state is not None
    assert first.output_state["reader"] == "full_refresh" and first.output_state["records_emitted"] == ROWS
    assert first.output_state["max_cursor_seen"].startswith("2026-01-01 00:30:00")
    clocked.merge()

    _touch(clocked, 4)
    second = clocked.extract()[0]
    assert second.input_state == {
        "stream_id": first.target,
        "cursor_field": "ModifiedDate",
        "cursor_value": first.output_state["cursor_value"],
        "reader": "clock_watermark",
    }
    assert second.rows_landed == 1  # nothing older than the input state
    output = second.output_state
    assert output is not None and output["cursor_value"] == second.watermark_candidate
    assert output["cursor_value"] > first.output_state["cursor_value"]
    assert datetime.fromisoformat(output["max_cursor_seen"]) <= datetime.fromisoformat(output["cursor_value"])
    clocked.merge()
    assert_replicas_equal(clocked)

    _touch(clocked, 5)
    result = _retry_cycle(clocked, lambda observe: clocked.extract(observer=observe)[0])
    assert result.rows_landed == 1  # landed once, though read twice
    clocked.merge()
    assert_replicas_equal(clocked)


@pytest.mark.parametrize("window, read", [("0s", 0), ("2h", 1)])
def test_clock_watermark_applies_the_safety_window_when_configured(clocked: Project, window: str, read: int) -> None:
    clocked.sync_replicas()
    committed = datetime.fromisoformat(str(clocked.scalar("select cursor_value from _migration.stream_state")))
    # Stamped an hour before the committed watermark, committed after it: a late commit.
    _touch(clocked, 6, f"timestamp '{committed - timedelta(hours=1)}'")
    clocked.env["TIDEMARK_SAFETY_WINDOW"] = window
    clocked.close()
    assert clocked.extract()[0].rows_landed == read


def test_modify_id_output_state_is_the_lowest_id_in_flight(versioned: Project) -> None:
    first = versioned.extract()[0]
    assert first.output_state is not None and first.output_state["cursor_value"] == f"0x{ROWS + 1:016X}"
    versioned.merge()
    _touch(versioned, 3)
    second = _retry_cycle(versioned, lambda observe: versioned.extract(observer=observe)[0])
    assert second.input_state is not None and second.input_state["cursor_value"] == f"0x{ROWS + 1:016X}"
    assert (second.rows_landed, second.output_state["reader"]) == (1, "modify_id")
    assert second.output_state["cursor_value"] == f"0x{ROWS + 2:016X}"
    versioned.merge()
    assert_replicas_equal(versioned)


def test_full_refresh_reads_every_row_each_time(plain: Project) -> None:
    plain.sync_replicas()
    _touch(plain, 2)
    result = _retry_cycle(plain, lambda observe: plain.extract(observer=observe)[0])
    assert (result.migration_type, result.rows_landed) == ("full", ROWS)
    assert result.output_state is not None and result.output_state["reader"] == "full_refresh"
    plain.merge()
    assert_replicas_equal(plain)


def test_asof_snapshot_output_state_is_its_date(clocked: Project) -> None:
    clocked.extract()  # the replica and the snapshot table its history reads
    landing = SnapshotLanding(clocked.planner, clocked.planner.find("dbo.Items"), date(2026, 12, 1), None)
    result = _retry_cycle(clocked, landing.run)
    assert result.rows_landed == ROWS
    assert result.output_state == {
        "stream_id": result.target,
        "cursor_field": "_as_of",
        "cursor_value": "2026-12-01",
        "records_emitted": ROWS,
        "reader": "asof_snapshot",
    }
    clocked.merge()
    assert clocked.scalar(f'select count(*) from "demo__{clocked.source_db}__dbo".items__asof_history') == ROWS


def test_reconcile_repairs_leave_the_cursor_where_it_was(clocked: Project) -> None:
    clocked.sync_replicas()
    committed = clocked.scalar("select cursor_value from _migration.stream_state")
    with clocked.source() as conn:  # a backdated change: the watermark cannot see it
        conn.execute("""update dbo."Items" set "Val" = 'backdated' where "Id" <= 3""")
    planner = clocked.planner
    plan = planner.plan(planner.find("dbo.Items"))
    result = _retry_cycle(clocked, lambda observe: reconcile_table(planner.context, plan, ReconcileOptions(), observe))
    assert (result.status, result.updated, result.rows_landed) == ("landed", 3, 3)
    assert result.input_state is not None and result.output_state is not None
    assert result.input_state["cursor_value"] == result.output_state["cursor_value"] == committed
    assert result.output_state["reader"] == "reconcile_repairs"
    clocked.merge()
    assert_replicas_equal(clocked)
    assert clocked.scalar("select cursor_value from _migration.stream_state") == committed
