"""The state registry: a merge commits each stream's state (versioned, audited); `state` reads it and
changes it by hand, compare-and-swap on the version, never while the table syncs; runs record seed 001's
input and output state."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from psycopg import sql

from extract.devtools.server import pg_commands
from tests.conftest import Project, database_url
from tests.items_table import create_items
from tests.replica_check import assert_replicas_equal

ROWS = 20
REPLICA = "items"


def _stamp(hour: int) -> str:
    return f"2026-01-01 {hour:02d}:00:00"


@pytest.fixture
def stamped(project: Project) -> Project:
    """dbo.Items, row i stamped at hour i of 2026-01-01, synced once."""
    create_items(project, ROWS, "1 hour")
    project.write_sync_tables(["dbo,Items,ModifiedDate,,true"])
    project.generate()
    project.sync_replicas()
    return project


def _state(project: Project, *args: str) -> Any:
    done = project.cli("state", *args, "--json")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def _table_key(project: Project) -> str:
    return f"demo__{project.source_db}__dbo.{REPLICA}"


def _touch(project: Project, item: int, value: str) -> None:
    with project.source() as conn:
        conn.execute(
            """update dbo."Items" set "Val" = %s, "ModifiedDate" = clock_timestamp() at time zone 'UTC'
            where "Id" = %s""",
            (value, item),
        )


def test_a_merge_commits_the_state_with_a_new_version_and_an_audit_row(stamped: Project) -> None:
    first = _state(stamped, "show", "dbo.Items")
    state = first["state"]
    assert state["stream_id"] == _table_key(stamped)
    assert (state["reader"], state["cursor_field"], state["version"]) == ("clock_watermark", "ModifiedDate", 1)
    run = first["latest_run"]
    assert run["input_state"] is None  # the first run read from nothing
    output = run["output_state"]
    assert output["cursor_value"] == state["cursor_value"] and output["records_emitted"] == ROWS
    assert output["max_cursor_seen"].startswith(_stamp(ROWS))
    assert output["reader"] == "full_refresh"  # the first run read every row

    _touch(stamped, 3, "changed")
    done = stamped.cli("--table", "dbo.Items", "--json", "--dbt", "build")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)["tables"][0]
    assert report["input_state"]["cursor_value"] == state["cursor_value"]
    assert report["output_state"]["records_emitted"] == 1
    assert report["output_state"]["reader"] == "clock_watermark"
    second = _state(stamped, "show", "dbo.Items")["state"]
    assert second["version"] == 2 and second["cursor_value"] == report["output_state"]["cursor_value"]
    history = _state(stamped, "history", "dbo.Items")
    assert [h["version"] for h in history] == [1, 2]
    assert history[1]["old_cursor"] == state["cursor_value"] and history[1]["reason"].endswith("merged")


def test_a_change_decided_on_an_old_version_is_refused(stamped: Project) -> None:
    seen = _state(stamped, "show", "dbo.Items")["state"]["version"]
    _touch(stamped, 4, "meanwhile")
    stamped.sync_replicas()  # a run commits version seen + 1
    audit_rows = stamped.scalar("select count(*) from _migration.state_audit")
    done = stamped.cli("state", "rewind", "dbo.Items", "--since", _stamp(5), "--expect-version", str(seen))
    assert done.returncode == 2
    assert f"not {seen}" in done.stderr and "committed meanwhile" in done.stderr
    assert _state(stamped, "show", "dbo.Items")["state"]["version"] == seen + 1
    assert stamped.scalar("select count(*) from _migration.state_audit") == audit_rows


def test_a_change_is_refused_while_the_table_syncs_or_waits_for_a_merge(stamped: Project) -> None:
    with stamped.target() as holder:  # what a running sync holds
        holder.execute("select pg_advisory_lock(hashtext(%s))", ("tidemark:extract:" + _table_key(stamped),))
        done = stamped.cli("state", "reset", "dbo.Items")
    assert done.returncode == 2 and "is running" in done.stderr
    _touch(stamped, 2, "landed, not merged")
    stamped.extract()
    done = stamped.cli("state", "reset", "dbo.Items")
    assert done.returncode == 2 and "wait for a merge" in done.stderr
    assert _state(stamped, "show", "dbo.Items")["state"]["version"] == 1


def test_a_rewind_re_reads_exactly_the_window(stamped: Project) -> None:
    done = stamped.cli("state", "rewind", "dbo.Items", "--since", _stamp(15))
    assert done.returncode == 0, done.stderr
    assert stamped.extract()[0].rows_landed == ROWS - 15 + 1  # hours 15..20, the window's rows only
    stamped.merge()
    assert_replicas_equal(stamped)
    assert stamped.scalar("select rows_unchanged from _migration.merge_log order by merge_id desc limit 1") == 6
    history = _state(stamped, "history", "dbo.Items")
    assert [h["reason"] for h in history][1] == f"rewound to {_stamp(15)}.000000"
    assert history[1]["changed_by"]  # the role that made it

    first_value = history[0]["new_cursor"]
    done = stamped.cli("state", "rewind", "dbo.Items", "--to-version", "1")
    assert done.returncode == 0, done.stderr
    assert _state(stamped, "show", "dbo.Items")["state"]["cursor_value"] == first_value


def test_set_checks_the_value_against_the_cursor_and_the_source_and_reset_reads_everything(stamped: Project) -> None:
    before = _state(stamped, "show", "dbo.Items")["state"]
    for value, said in (("yesterday", "is not a clock reading"), ("2999-01-01 00:00:00", "ahead of the source")):
        done = stamped.cli("state", "set", "dbo.Items", "--cursor", value)
        assert done.returncode == 2 and said in done.stderr and value in done.stderr, done.stderr
    assert _state(stamped, "show", "dbo.Items")["state"] == before
    done = stamped.cli("state", "set", "dbo.Items", "--cursor", _stamp(18))
    assert done.returncode == 0, done.stderr
    assert stamped.extract()[0].rows_landed == 3
    stamped.merge()
    assert stamped.cli("state", "reset", "dbo.Items").returncode == 0
    result = stamped.extract()[0]
    assert (result.migration_type, result.rows_landed) == ("full", ROWS)
    stamped.merge()
    assert_replicas_equal(stamped)


@pytest.fixture
def second_target(stamped: Project, pg_admin_url: str) -> Iterator[str]:
    name = f"{stamped.target_db}_moved"
    with psycopg.connect(pg_admin_url, autocommit=True) as admin:
        admin.execute(sql.SQL("create database {}").format(sql.Identifier(name)))
    yield name
    stamped.close()
    with psycopg.connect(pg_admin_url, autocommit=True) as admin:
        admin.execute(sql.SQL("drop database if exists {} with (force)").format(sql.Identifier(name)))


def _copy_replica(stamped: Project, target_url: str) -> None:
    """The replica's schema moved to another target, as a user moves it: pg_dump, then psql."""
    binaries = pg_commands.POSTGRES_BIN_PATH
    dump = subprocess.run(
        [str(binaries / "pg_dump"), "--schema", f"demo__{stamped.source_db}__dbo", "--no-owner", stamped.target_url],
        capture_output=True,
        check=True,
    )
    subprocess.run(
        [str(binaries / "psql"), "--quiet", "--set", "ON_ERROR_STOP=1", target_url],
        input=dump.stdout,
        capture_output=True,
        check=True,
    )


def test_export_then_import_into_an_empty_target_continues_incrementally(
    stamped: Project, second_target: str, tmp_path: Path
) -> None:
    exported = tmp_path / "state.json"
    assert stamped.cli("state", "export", "--output", str(exported)).returncode == 0
    streams = json.loads(exported.read_text())["streams"]
    assert [s["stream_id"] for s in streams] == [_table_key(stamped)]

    new_url = database_url(stamped.target_url, second_target)
    _copy_replica(stamped, new_url)
    stamped.close()
    stamped.env.update({"TIDEMARK_TARGET_URL": new_url, "TIDEMARK_TARGET_DBNAME": second_target})
    stamped.target_url = new_url
    done = stamped.cli("state", "import", str(exported))
    assert done.returncode == 0, done.stderr
    again = stamped.cli("state", "import", str(exported))
    assert again.returncode == 2 and "has state in this target already" in again.stderr
    imported = _state(stamped, "show", "dbo.Items")["state"]
    assert imported["cursor_value"] == streams[0]["cursor_value"] and imported["version"] == streams[0]["version"] + 1

    _touch(stamped, 7, "after the move")
    result = stamped.extract()[0]
    assert (result.migration_type, result.rows_landed) == ("incremental", 1)
    stamped.merge()
    assert_replicas_equal(stamped)


def test_a_full_refresh_commits_its_own_state(stamped: Project) -> None:
    """A full refresh replaces the replica at the end of its run (no dbt merge): the registry moves to that
    run in the same transaction."""
    done = stamped.cli("--table", "dbo.Items", "--full-refresh", "--json")
    assert done.returncode == 0, done.stderr
    run = json.loads(done.stdout)["tables"][0]
    state = _state(stamped, "show", "dbo.Items")["state"]
    assert (state["run_id"], state["cursor_value"]) == (run["run_id"], run["watermark_candidate"])
    assert state["version"] == 2
    assert _state(stamped, "history", "dbo.Items")[1]["reason"] == f"run {run['run_id']} merged"
