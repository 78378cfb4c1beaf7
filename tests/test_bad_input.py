"""Bad input gets a clear error that names the bad value, and changes no state."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from extract.config.seeds import read_sync_tables
from extract.config.settings import load_settings
from extract.core.errors import BatchRefused, KeyValueRefused, TidemarkError
from tests.conftest import REPO, Project
from tests.demo_fixture import demo

__all__ = ["demo"]


def state_fingerprint(project: Project) -> tuple[object, ...]:
    with project.target() as conn:
        rows = conn.execute(
            "select (select count(*) from _migration.run_log), (select count(*) from _migration.merge_log),"
            " (select count(*) from pg_tables where schemaname not in ('pg_catalog', 'information_schema'))"
        ).fetchone()
    assert rows is not None
    return tuple(rows)


@pytest.fixture
def synced(demo: Project) -> Project:
    with demo.source() as conn:
        conn.execute('create table dbo."NoKey" ("Id" integer, "ModifiedDate" timestamp)')
        conn.execute('create table dbo."Shapes" ("Id" integer primary key, "Where" point)')
    demo.sync_replicas()
    return demo


def _expect_error(project: Project, table_row: str, table: str, *needles: str) -> None:
    before = state_fingerprint(project)
    project.write_sync_tables([table_row])
    with pytest.raises(TidemarkError) as caught:
        project.extract(table)
    message = str(caught.value)
    for needle in needles:
        assert needle in message, f"{needle!r} not in {message!r}"
    assert state_fingerprint(project) == before


def test_table_missing_from_the_source(synced: Project) -> None:
    _expect_error(synced, "dbo,Custmers,,,true", "dbo.Custmers", "unknown table 'dbo.Custmers'", "dbo.Customers")


def test_table_without_primary_key(synced: Project) -> None:
    _expect_error(synced, "dbo,NoKey,,,true", "dbo.NoKey", "dbo.NoKey has no primary key")


def test_type_the_map_does_not_cover(synced: Project) -> None:
    _expect_error(synced, "dbo,Shapes,,,true", "dbo.Shapes", "dbo.Shapes.Where", "'point'", "type_map.csv")


def test_name_shaped_like_sql_injection_is_only_ever_a_name(synced: Project) -> None:
    evil = 'Customers"; drop table dbo."Orders"; --'
    _expect_error(synced, 'dbo,"' + evil.replace('"', '""') + '",,,true', f"dbo.{evil}", "unknown table")
    with synced.source() as conn:
        assert conn.execute('select count(*) from dbo."Orders"').fetchone() == (120,)


def test_table_not_configured(synced: Project) -> None:
    with pytest.raises(TidemarkError, match=r"unknown table 'dbo\.Nope': not in seeds/sync_tables\.csv"):
        synced.planner.find("dbo.Nope")
    with pytest.raises(TidemarkError, match=r"'Customers' is not of the form SCHEMA\.TABLE"):
        synced.planner.find("Customers")


def test_cursor_override_that_is_not_temporal(synced: Project) -> None:
    _expect_error(synced, "dbo,Customers,Name,,true", "dbo.Customers", "cursor_column 'Name'", "character varying")


def test_seed_typo_is_named(tmp_path: Path) -> None:
    (tmp_path / "sync_tables.csv").write_text("source_schema,source_table,cursor_colum\ndbo,Users,x\n")
    with pytest.raises(TidemarkError, match="unknown column\\(s\\) cursor_colum"):
        read_sync_tables(tmp_path)
    (tmp_path / "sync_tables.csv").write_text("source_schema,source_table,enabled\ndbo,Users,maybe\n")
    with pytest.raises(TidemarkError, match="enabled must be true or false, not 'maybe'"):
        read_sync_tables(tmp_path)
    (tmp_path / "sync_tables.csv").write_text("source_schema,source_table,on_schema_change\ndbo,Users,sync_all\n")
    with pytest.raises(
        TidemarkError, match="on_schema_change must be one of evolve, append_new_columns, fail, not 'sync_all'"
    ):
        read_sync_tables(tmp_path)
    (tmp_path / "sync_tables.csv").write_text("source_schema,source_table,reader\ndbo,Users,debezium\n")
    with pytest.raises(
        TidemarkError,
        match="line 2: reader must be one of auto, change_tracking, cdc, rowversion, clock, full, not 'debezium'",
    ):
        read_sync_tables(tmp_path)


@pytest.mark.parametrize(
    ("url", "needle"),
    [
        ("jdbc:sqlserver//db01:1433", "unknown scheme"),
        ("jdbc:sqlserver://db01:99999;databaseName=x", "port 99999 is out of range"),
        ("jdbc:sqlserver://db01:1433", "no databaseName"),
        ("postgresql://me:hunter2@db01:5x/app", "cannot read host and port"),
    ],
)
def test_malformed_url_is_named_and_the_password_is_not(url: str, needle: str) -> None:
    env = {"TIDEMARK_SOURCE_URL": url, "TIDEMARK_TARGET_URL": "postgresql://localhost/t"}
    with pytest.raises(TidemarkError) as caught:
        load_settings(env)
    assert needle in str(caught.value)
    assert "hunter2" not in str(caught.value)


def test_cli_reports_bad_url_with_exit_code_2() -> None:
    env = {**os.environ, "TIDEMARK_SOURCE_URL": "mysql://db01/app", "TIDEMARK_TARGET_URL": "postgresql://localhost/t"}
    result = subprocess.run(
        [sys.executable, "-m", "extract", "--table", "dbo.Users"], env=env, capture_output=True, text=True, cwd=REPO
    )
    assert result.returncode == 2
    assert "malformed database URL 'mysql://db01/app'" in result.stderr
    assert "Traceback" not in result.stderr


def test_duplicate_keys_in_one_batch_stop_the_run_and_change_nothing(synced: Project) -> None:
    with synced.source() as conn:
        conn.execute('create table dbo."Events" ("Id" integer, "Payload" text, "ModifiedDate" timestamp)')
        conn.execute("""insert into dbo."Events" values (1, 'a', now()), (2, 'b', now()), (1, 'again', now())""")
    synced.write_sync_tables(["dbo,Events,,Id,true"])
    with pytest.raises(BatchRefused) as caught:
        synced.extract("dbo.Events")
    # The key value is for --verbose only: the message the run log keeps names none.
    assert "dbo.Events: the batch holds a key (--verbose shows it) more than once" in str(caught.value)
    assert isinstance(caught.value, KeyValueRefused) and "holds the key (Id=1)" in caught.value.verbose_message
    synced.generate()
    synced.merge()  # nothing landed, so nothing to merge, and no raw ON CONFLICT error
    replica = f'"demo__{synced.source_db}__dbo".events'
    assert synced.scalar(f"select count(*) from {replica}") == 0
    assert synced.scalar("select sync_status from _migration._migration_state where source_table = 'Events'") == (
        "failed"
    )
    assert (
        synced.scalar("select last_sync_watermark from _migration._migration_state where source_table = 'Events'")
        is None
    )
    assert synced.scalar(f'select count(*) from "demo__{synced.source_db}__dbo".stg__events') == 0
