"""A replica follows its source's schema as the table's on_schema_change says (evolve, the default;
append_new_columns; fail), through the command a user runs: the catalog read, the extract, the dbt
files written again, and dbt's merge, in one process."""

from __future__ import annotations

import json

import pytest

from tests.conftest import Project
from tests.replica_check import assert_replicas_equal

HEADER = "source_schema,source_table,cursor_column,primary_key,enabled,on_schema_change"
STAMP = "clock_timestamp() at time zone 'UTC'"


def _sync(project: Project, *extra: str) -> dict[str, object]:
    done = project.cli("--all", "--dbt", "build", "--json", "--quiet", *extra)
    assert done.returncode in (0, 1), done.stderr[-3000:]
    report: dict[str, object] = json.loads(done.stdout)
    return report


def _columns(project: Project, table: str = "items") -> dict[str, str]:
    with project.target() as conn:
        rows = conn.execute(
            """select a.attname, format_type(a.atttypid, a.atttypmod) from pg_attribute as a
            where a.attrelid = (select c.oid from pg_class as c join pg_namespace as n on n.oid = c.relnamespace
                where c.relname = %s and n.nspname not like '\\_%%' and c.relkind = 'r')
            and a.attnum > 0 and not a.attisdropped and a.attgenerated = '' order by a.attnum""",
            (table,),
        ).fetchall()
    return {str(name): str(type_text) for name, type_text in rows}


def _setup(project: Project, policy: str) -> Project:
    with project.source() as conn:
        conn.execute("create schema dbo")
        conn.execute(
            """create table dbo."Items" ("Id" integer primary key, "Name" varchar(20) not null, "Note" text,
            "Price" numeric(8, 2), "ModifiedDate" timestamp(3) not null)"""
        )
        conn.execute(
            """insert into dbo."Items" select i, 'item ' || i, 'note ' || i, i * 1.5,
            timestamp '2026-01-01' + i * interval '1 minute' from generate_series(1, 50) as i"""
        )
    project.write_sync_tables([f"dbo,Items,ModifiedDate,,true,{policy}"], HEADER)
    project.generate()
    report = _sync(project)
    assert report["failed"] == 0, report
    return project


@pytest.fixture
def evolving(project: Project) -> Project:
    return _setup(project, "")


def _table(report: dict[str, object]) -> dict[str, object]:
    tables = report["tables"]
    assert isinstance(tables, list)
    entry: dict[str, object] = tables[0]
    return entry


def test_evolve_follows_added_dropped_widened_and_changed_columns(evolving: Project) -> None:
    with evolving.source() as conn:
        conn.execute("""alter table dbo."Items" add column "Flag" integer not null default 7""")
        conn.execute("""alter table dbo."Items" drop column "Note" """)
        conn.execute("""alter table dbo."Items" alter column "Name" type varchar(60)""")
        conn.execute("""alter table dbo."Items" alter column "Price" type text""")
        conn.execute(f"""update dbo."Items" set "Name" = repeat('x', 50), "ModifiedDate" = {STAMP} where "Id" = 3""")
    report = _sync(evolving)
    entry = _table(report)
    assert entry["status"] == "landed" and entry["migration_type"] == "full", entry
    assert sorted(entry["schema_changes"]) == [  # type: ignore[arg-type]
        "column flag added (integer); every row read again",
        "column name widened (character varying(20) -> character varying(60))",
        "column note dropped (text)",
        "column price replaced (numeric(8,2) -> text); every row read again",
    ]
    assert _columns(evolving) == {
        "id": "integer",
        "name": "character varying(60)",
        "price": "text",
        "modifieddate": "timestamp(3) without time zone",
        "flag": "integer",
    }
    assert assert_replicas_equal(evolving) == 50
    assert evolving.scalar("select count(*) from _migration.schema_changes") == 4
    status = evolving.cli("status")
    assert status.returncode == 0, status.stderr
    lines = status.stdout.split("schema changes applied to replicas (latest 4):", 1)[1].splitlines()
    assert [line.split()[2:5] for line in lines[2:]] == [
        ["dbo.Items", "column_replaced", "price"],
        ["dbo.Items", "column_widened", "name"],
        ["dbo.Items", "column_dropped", "note"],
        ["dbo.Items", "column_added", "flag"],
    ], status.stdout
    # The dbt files follow: the snapshot checks the new column, not the dropped one.
    snapshots = (evolving.root / "snapshots" / "_replica__snapshots.yml").read_text()
    assert '"flag"' in snapshots and '"note"' not in snapshots

    # The backfill is done: the next run reads changes only.
    with evolving.source() as conn:
        conn.execute(f"""update dbo."Items" set "Flag" = 8, "ModifiedDate" = {STAMP} where "Id" = 5""")
    entry = _table(_sync(evolving))
    assert entry["migration_type"] == "incremental" and entry["rows_landed"] == 1, entry
    assert assert_replicas_equal(evolving) == 50


def test_a_backfill_survives_a_run_that_fails_after_the_replica_was_altered(evolving: Project) -> None:
    with evolving.source() as conn:
        conn.execute("""alter table dbo."Items" add column "Flag" integer default 7""")
    failed = evolving.cli("--all", "--dbt", "nonsense-command", "--quiet")
    assert failed.returncode == 2  # dbt's arguments are refused before anything lands
    report = _sync(evolving, "--dbt", "build")
    assert _table(report)["migration_type"] == "full"
    assert assert_replicas_equal(evolving) == 50


def test_append_new_columns_keeps_a_dropped_column_and_its_values(project: Project) -> None:
    _setup(project, "append_new_columns")
    with project.source() as conn:
        conn.execute("""alter table dbo."Items" drop column "Note" """)
        conn.execute("""alter table dbo."Items" add column "Flag" integer default 7""")
        conn.execute("""insert into dbo."Items" values (51, 'new', 1, timestamp '2026-02-01', 9)""")
    entry = _table(_sync(project))
    assert "column note kept (text)" in entry["schema_changes"]  # type: ignore[operator]
    assert "note" in _columns(project)
    with project.target() as conn:
        kept = conn.execute(
            "select count(*) filter (where note is not null), count(*) filter (where note is null and id = 51)"
            " from " + _replica_name(project)
        ).fetchone()
    assert kept == (50, 1)
    assert assert_replicas_equal(project) == 51


def test_fail_refuses_and_changes_nothing(project: Project) -> None:
    _setup(project, "fail")
    before = _columns(project)
    with project.source() as conn:
        conn.execute("""alter table dbo."Items" add column "Flag" integer default 7""")
        conn.execute("""alter table dbo."Items" alter column "Name" type varchar(60)""")
    runs = project.scalar("select count(*) from _migration.run_log")
    done = project.cli("--all", "--dbt", "build", "--quiet")
    assert done.returncode == 1
    line = [text for text in done.stderr.splitlines() if "on_schema_change is fail" in text]
    assert line == [
        "error: dbo.Items: the source's schema changed and on_schema_change is fail: column flag added (integer); "
        "column name widened (character varying(20) -> character varying(60)). Nothing was written; set "
        "on_schema_change to evolve or append_new_columns in seeds/sync_tables.csv to follow it"
    ], done.stderr
    assert _columns(project) == before
    assert project.scalar("select count(*) from _migration.run_log") == runs
    assert project.scalar("select count(*) from _migration.schema_changes") == 0


def test_a_changed_primary_key_is_refused_until_a_full_refresh(evolving: Project) -> None:
    history = f'{_replica_name(evolving)[:-1]}__history"'
    versions = evolving.scalar(f"select count(*) from {history}")
    assert versions == 50
    with evolving.source() as conn:
        conn.execute("""alter table dbo."Items" drop constraint "Items_pkey", add primary key ("Id", "Name")""")
        conn.execute("""alter table dbo."Items" add column "Flag" integer default 7""")
        conn.execute("""delete from dbo."Items" where "Id" > 45""")
    done = evolving.cli("--all", "--quiet")
    assert done.returncode == 1
    assert "the source's primary key changed from (id) to (id, name)" in done.stderr, done.stderr
    assert "--full-refresh" in done.stderr

    entry = _table(_sync(evolving, "--full-refresh"))
    assert entry["status"] == "landed" and entry["migration_type"] == "full", entry
    assert entry["schema_changes"][-1] == "replica replaced: 45 rows landed, 50 before"  # type: ignore[index]
    assert assert_replicas_equal(evolving) == 45
    with evolving.target() as conn:
        key = conn.execute(
            "select array_agg(a.attname order by a.attname) from pg_index as i join pg_attribute as a"
            " on a.attrelid = i.indrelid and a.attnum = any(i.indkey) where i.indrelid = %s::regclass"
            " and i.indisprimary",
            (_replica_name(evolving),),
        ).fetchone()
    assert key == (["id", "name"],)
    # The history is kept: the old versions, closed, and the rows as the replica holds them now.
    assert evolving.scalar(f"select count(*) from {history}") > versions
    assert evolving.scalar(f"select count(*) from {history} where dbt_valid_to is null") == 45
    # What follows is an ordinary incremental sync of the new replica.
    with evolving.source() as conn:
        conn.execute(f"""update dbo."Items" set "Flag" = 1, "ModifiedDate" = {STAMP} where "Id" = 2""")
    entry = _table(_sync(evolving))
    assert entry["migration_type"] == "incremental" and entry["rows_landed"] == 1, entry
    assert assert_replicas_equal(evolving) == 45


def _replica_name(project: Project) -> str:
    names = project.planner.plan(project.planner.find("dbo.Items")).names
    return f'"{names.schema}"."{names.table}"'
