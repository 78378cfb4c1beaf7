"""The as-of history end to end: snapshots landed by the extract (from the source or a file), applied by
`dbt build` in any order of dates."""

from __future__ import annotations

import csv
from datetime import date
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from extract.core.errors import KeyValueRefused, TidemarkError
from extract.core.observer import Event, PartitionLanded, Planned, RunBegan, silent
from extract.readers.asof_snapshot import SnapshotLanding
from tests.conftest import Project

SCHEMA_PREFIX = "demo__"
SEED_HEADER = "source_schema,source_table,cursor_column,primary_key,enabled,asof_history\n"
DEC = {day: date(2026, 12, day) for day in (1, 3, 5, 9, 17)}
Version = tuple[int, str, str | None, date, date | None]


@pytest.fixture
def prices(project: Project) -> Project:
    with project.source() as conn:
        conn.execute(
            """create schema dbo;
            create table dbo."Prices" (
                "ItemID" integer primary key,
                "Name" varchar(40) not null,
                "Attrs" json,
                "Photo" bytea
            )"""
        )
    seed = project.root / "seeds" / "sync_tables.csv"
    seed.write_text(SEED_HEADER + "dbo,Prices,,,true,true\n")
    project.close()
    project.generate()
    project.extract()  # the replica, and the empty snapshot table its history model reads
    return project


def source_rows(project: Project, rows: list[tuple[int, str, str | None]]) -> None:
    with project.source() as conn:
        conn.execute('truncate dbo."Prices"')
        for item, name, attrs in rows:
            conn.execute('insert into dbo."Prices" values (%s, %s, %s, %s)', (item, name, attrs, name.encode()))


def land(project: Project, as_of: date, file: Path | None = None, observer: Any = None) -> int:
    config = project.planner.find("dbo.Prices")
    landing = SnapshotLanding(project.planner, config, as_of, file)
    return landing.run(observer or silent).rows_landed


def history(project: Project) -> list[Version]:
    with project.target() as conn:
        rows = conn.execute(
            f'select "itemid", "name", "attrs"::text, valid_from, valid_to, "photo" from '
            f'"{SCHEMA_PREFIX}{project.source_db}__dbo".prices__asof_history order by 1, 4'
        ).fetchall()
    for row in rows:
        assert bytes(row[5]) == row[1].encode(), row  # bytea lands intact
    return [(r[0], r[1], r[2], r[3], r[4]) for r in rows]


def test_the_worked_example_through_extract_and_dbt(prices: Project) -> None:
    source_rows(prices, [(1, "X", '{"a": 1}')])
    assert land(prices, DEC[17]) == 1
    prices.build()
    assert history(prices) == [(1, "X", '{"a": 1}', DEC[17], None)]

    assert land(prices, DEC[1]) == 1  # same data, earlier: the version reaches back
    prices.build()
    assert history(prices) == [(1, "X", '{"a": 1}', DEC[1], None)]

    # Two snapshots landed before one build are both applied.
    land(prices, DEC[5])  # covered, same data: no change
    source_rows(prices, [])
    land(prices, DEC[3])  # absent on Dec 3: closed there, present again from Dec 5
    prices.build()
    assert history(prices) == [(1, "X", '{"a": 1}', DEC[1], DEC[3]), (1, "X", '{"a": 1}', DEC[5], None)]

    with prices.target() as conn:
        dates = conn.execute("select as_of from _migration.history_dates order by 1").fetchall()
        waiting = conn.execute("select count(*) from _migration.snapshot_log where applied_at is null").fetchone()
    assert [d[0] for d in dates] == [DEC[1], DEC[3], DEC[5], DEC[17]]
    assert waiting == (0,)

    prices.build()  # nothing waits: nothing changes
    assert len(history(prices)) == 2


def test_a_json_change_opens_a_version_and_the_next_snapshot_clears_applied_rows(prices: Project) -> None:
    source_rows(prices, [(1, "X", '{"a": 1}'), (2, "Y", None)])
    land(prices, DEC[1])
    source_rows(prices, [(1, "X", '{"a": 2}'), (2, "Y", None)])
    land(prices, DEC[9])
    prices.build()
    assert history(prices) == [
        (1, "X", '{"a": 1}', DEC[1], DEC[9]),
        (1, "X", '{"a": 2}', DEC[9], None),
        (2, "Y", None, DEC[1], None),
    ]
    land(prices, DEC[5])  # a late snapshot: rows of applied runs are gone from the landing table
    landing = f'"{SCHEMA_PREFIX}{prices.source_db}__dbo".snap__prices'
    assert prices.scalar(f"select count(distinct _tidemark_run_id) from {landing}") == 1
    prices.build()
    assert history(prices) == [
        (1, "X", '{"a": 1}', DEC[1], DEC[5]),
        (1, "X", '{"a": 2}', DEC[5], None),  # Dec 5 saw the new data already
        (2, "Y", None, DEC[1], None),
    ]


def test_snapshot_files_csv_and_parquet(prices: Project, tmp_path: Path) -> None:
    csv_path = tmp_path / "prices-dec1.csv"
    with csv_path.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["itemid", "NAME", "Attrs", "Photo"])  # any case, source or replica names
        writer.writerow([1, "X", '{"a": 1}', "\\x" + b"X".hex()])
        writer.writerow([2, "Y, with a comma", "", "\\x" + b"Y, with a comma".hex()])
    parquet_path = tmp_path / "prices-dec5.parquet"
    pq.write_table(
        pa.table({"ItemID": [1], "Name": ["X2"], "Attrs": ['{"a": 1}'], "Photo": pa.array([b"X2"], pa.binary())}),
        parquet_path,
    )
    assert land(prices, DEC[5], parquet_path) == 1
    assert land(prices, DEC[1], csv_path) == 2
    prices.build()
    assert history(prices) == [
        (1, "X", '{"a": 1}', DEC[1], DEC[5]),
        (1, "X2", '{"a": 1}', DEC[5], None),
        (2, "Y, with a comma", None, DEC[1], DEC[5]),
    ]


def test_bad_snapshots_are_refused_and_nothing_is_applied(prices: Project, tmp_path: Path) -> None:
    repeated = tmp_path / "repeated.csv"
    repeated.write_text('ItemID,Name,Attrs,Photo\n7,"a",,\n7,"b",,\n')
    with pytest.raises(KeyValueRefused, match=r"holds a key \(--verbose shows it\) more than once") as refused:
        land(prices, DEC[1], repeated)
    assert refused.value.exit_code == 2 and "holds the key (ItemID=7)" in refused.value.verbose_message
    keyless = tmp_path / "keyless.csv"
    keyless.write_text('ItemID,Name,Attrs,Photo\n7,"a",,\n,"b",,\n')
    with pytest.raises(TidemarkError, match=r"has 1 row\(s\) with no value in the key \(ItemID\)") as refused:
        land(prices, DEC[1], keyless)
    assert refused.value.exit_code == 2
    unreadable = tmp_path / "unreadable.csv"
    unreadable.write_text('ItemID,Name,Attrs,Photo\n7,"a","{not json",\n')
    with pytest.raises(TidemarkError, match=r"row 1, column attrs: .*invalid input syntax for type json"):
        land(prices, DEC[1], unreadable)
    short = tmp_path / "short.csv"
    short.write_text("ItemID,Name,Colour\n1,a,red\n")
    with pytest.raises(TidemarkError, match=r"missing column.*Attrs, Photo; column.*does not have: Colour"):
        land(prices, DEC[1], short)
    mixed = tmp_path / "mixed"
    mixed.mkdir()
    (mixed / "part-1.csv").write_text(repeated.read_text())
    (mixed / "part-2.txt").write_text(repeated.read_text())
    with pytest.raises(TidemarkError, match="cannot tell its format"):
        land(prices, DEC[1], mixed)
    with pytest.raises(TidemarkError, match="does not exist"):
        land(prices, DEC[1], tmp_path / "nowhere.parquet")
    prices.build()
    assert history(prices) == []
    with prices.target() as conn:
        statuses = conn.execute("select status from _migration.snapshot_log order by run_id").fetchall()
    assert statuses == []  # every file is refused before a run starts


def test_command_line(prices: Project) -> None:
    source_rows(prices, [(1, "X", None)])
    bad = prices.cli("--table", "dbo.Prices", "--snapshot-date", "2026-12-32")
    assert bad.returncode == 2 and "--snapshot-date '2026-12-32' is not a date" in bad.stderr
    alone = prices.cli("--table", "dbo.Prices", "--snapshot-file", "x.csv")
    assert alone.returncode == 2 and "--snapshot-file 'x.csv' needs --snapshot-date" in alone.stderr
    landed = prices.cli("--table", "dbo.Prices", "--snapshot-date", "2026-12-01", "--json")
    assert landed.returncode == 0, landed.stderr
    assert '"as_of": "2026-12-01"' in landed.stdout and '"rows_landed": 1' in landed.stdout

    seed = prices.root / "seeds" / "sync_tables.csv"
    seed.write_text(SEED_HEADER + "dbo,Prices,,,true,false\n")
    refused = prices.cli("--table", "dbo.Prices", "--snapshot-date", "2026-12-01")
    # Configuration, found while planning: nothing runs.
    assert refused.returncode == 2 and "dbo.Prices keeps no as-of history" in refused.stderr


class Killed(BaseException):
    """Stands in for kill -9: nothing in the extract gets to handle it."""


def test_a_killed_snapshot_resumes_with_the_partitions_not_landed(prices: Project) -> None:
    source_rows(prices, [(i, f"item {i}", None) for i in range(1, 41)])
    prices.env["PARTITION_ROWS"] = "5"  # 8 partitions
    prices.close()
    holder = prices.target()
    holder.autocommit = False

    def hold_partitions_4_and_up(event: Event) -> None:
        if isinstance(event, Planned):  # their tasks copy their rows, then wait to mark the partition landed
            holder.execute(
                "select 1 from _migration.partition_log where run_id = %s and partition_no >= 4 for update",
                (event.run.run_id,),
            )
        if isinstance(event, PartitionLanded):
            raise Killed

    with pytest.raises(Killed):
        land(prices, DEC[9], observer=hold_partitions_4_and_up)
    with prices.target() as conn:  # the waiting tasks die with the process
        conn.execute(
            "select pg_terminate_backend(pid) from pg_stat_activity"
            " where wait_event_type = 'Lock' and datname = current_database()"
        )
    holder.rollback()
    holder.close()
    killed_run = prices.scalar("select max(run_id) from _migration.snapshot_log")
    assert prices.scalar("select status from _migration.snapshot_log where run_id = %s", (killed_run,)) == "running"
    landed_before = prices.scalar(
        "select count(*) from _migration.partition_log where run_id = %s and landed_at is not null", (killed_run,)
    )
    assert 1 <= landed_before < 4

    events: list[Event] = []
    assert land(prices, DEC[9], observer=events.append) == 40
    assert isinstance(events[0], RunBegan) and events[0].resumed is True
    assert prices.scalar("select max(run_id) from _migration.snapshot_log") == killed_run
    prices.build()
    assert len(history(prices)) == 40
    assert {v[3] for v in history(prices)} == {DEC[9]}


def test_a_snapshot_killed_before_its_plan_starts_anew(prices: Project) -> None:
    """Killed between its begin and its partition plan, the run has nothing to go on with: the next run of
    the same date is a new one that reads every row, never an empty snapshot."""
    source_rows(prices, [(i, f"item {i}", None) for i in range(1, 11)])

    def killed_before_planning(event: Event) -> None:
        if isinstance(event, RunBegan):
            raise Killed

    with pytest.raises(Killed):
        land(prices, DEC[9], observer=killed_before_planning)
    killed_run = prices.scalar("select max(run_id) from _migration.snapshot_log")
    assert prices.scalar("select status from _migration.snapshot_log where run_id = %s", (killed_run,)) == "running"
    assert land(prices, DEC[9]) == 10
    assert prices.scalar("select max(run_id) from _migration.snapshot_log") > killed_run
    assert prices.scalar("select status from _migration.snapshot_log where run_id = %s", (killed_run,)) == "failed"
