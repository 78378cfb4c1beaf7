"""A replica follows its source's schema as the table's on_schema_change says (evolve, the default;
append_new_columns; fail), through the command a user runs: the catalog read, the extract, the dbt
files written again, and dbt's merge, in one process."""

from __future__ import annotations

import json

import pytest
import yaml

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


#: One table per policy, alike, changed alike.
POLICIES = {"Items": "", "Kept": "append_new_columns", "Frozen": "fail"}


@pytest.fixture
def evolving(project: Project) -> Project:
    with project.source() as conn:
        conn.execute("create schema dbo")
        for table in POLICIES:
            conn.execute(
                f"""create table dbo."{table}" ("Id" integer primary key, "Name" varchar(20) not null, "Note" text,
                "Price" numeric(8, 2), "ModifiedDate" timestamp(3) not null)"""
            )
            conn.execute(
                f"""insert into dbo."{table}" select i, 'item ' || i, 'note ' || i, i * 1.5,
                timestamp '2026-01-01' + i * interval '1 minute' from generate_series(1, 50) as i"""
            )
    project.write_sync_tables(
        [f"dbo,{table},ModifiedDate,,true,{policy}" for table, policy in POLICIES.items()], HEADER
    )
    project.generate()
    report = _sync(project)
    assert report["failed"] == 0, report
    return project


def _change_every_table(project: Project) -> None:
    with project.source() as conn:
        for table in POLICIES:
            conn.execute(f"""alter table dbo."{table}" add column "Flag" integer not null default 7""")
            conn.execute(f"""alter table dbo."{table}" drop column "Note" """)
            conn.execute(f"""alter table dbo."{table}" alter column "Name" type varchar(60)""")
            conn.execute(f"""alter table dbo."{table}" alter column "Price" type text""")
            conn.execute(
                f"""update dbo."{table}" set "Name" = repeat('x', 50), "ModifiedDate" = {STAMP} where "Id" = 3"""
            )
            conn.execute(
                f"""insert into dbo."{table}" ("Id", "Name", "ModifiedDate", "Flag", "Price")
                values (51, 'new', timestamp '2026-02-01', 9, '1.25')"""
            )


def _table(report: dict[str, object], name: str = "dbo.Items") -> dict[str, object]:
    tables = report["tables"]
    assert isinstance(tables, list)
    entry: dict[str, object] = next(t for t in tables if t["table"] == name)
    return entry


def _table_keys(project: Project) -> dict[str, str]:
    return {t: project.planner.plan(project.planner.find(f"dbo.{t}")).names.table_key for t in POLICIES}


def test_each_policy_follows_a_change_of_schema_as_written(evolving: Project) -> None:
    keys = _table_keys(evolving)
    frozen_before = _columns(evolving, "frozen")
    frozen_runs = evolving.scalar("select count(*) from _migration.run_log where table_key = %s", (keys["Frozen"],))
    _change_every_table(evolving)
    done = evolving.cli("--all", "--dbt", "build", "--json", "--quiet")
    assert done.returncode == 1, done.stderr[-3000:]  # the fail table's run failed; the others landed
    report = json.loads(done.stdout)
    assert report["dbt"]["success"], report["dbt"]

    # evolve: the replica is the source's, every row read again for the added and replaced columns
    entry = _table(report)
    assert entry["status"] == "landed" and entry["migration_type"] == "full", entry
    assert sorted(entry["schema_changes"]) == [
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
    # The dbt files follow the replicas: each snapshot checks the columns its replica holds.
    snapshots = yaml.safe_load((evolving.root / "snapshots" / "_replica__snapshots.yml").read_text())["snapshots"]
    checked = {s["relation"].split("__dbo__")[1].rstrip("')"): s["config"]["check_cols"] for s in snapshots}
    assert checked == {
        "items": ['"name"', '"price"', '"modifieddate"', '"flag"'],
        "kept": ['"name"', '"note"', '"modifieddate"', '"flag"', '"price"'],  # price replaced: a new column
        "frozen": ['"name"', '"note"', '"price"', '"modifieddate"'],
    }

    # append_new_columns: the dropped column stays, with its values; NULL in the new row
    assert "column note kept (text)" in _table(report, "dbo.Kept")["schema_changes"]
    assert "note" in _columns(evolving, "kept")
    with evolving.target() as conn:
        kept = conn.execute(
            "select count(*) filter (where note is not null), count(*) filter (where note is null and id = 51)"
            " from " + _replica_name(evolving, "dbo.Kept")
        ).fetchone()
    assert kept == (50, 1)

    # fail: one line naming the table, the columns and their definitions; nothing written
    line = [text for text in done.stderr.splitlines() if "on_schema_change is fail" in text]
    assert line == [
        "error: dbo.Frozen: the source's schema changed and on_schema_change is fail: column flag added (integer); "
        "column note dropped (text); column name widened (character varying(20) -> character varying(60)); "
        "column price changed (numeric(8,2) -> text). Nothing was written; set on_schema_change to evolve or "
        "append_new_columns in seeds/sync_tables.csv to follow it"
    ], done.stderr
    assert _table(report, "dbo.Frozen")["status"] == "failed"
    assert _columns(evolving, "frozen") == frozen_before
    assert evolving.scalar("select count(*) from _migration.run_log where table_key = %s", (keys["Frozen"],)) == (
        frozen_runs
    )

    evolving.write_sync_tables(
        [f"dbo,{table},ModifiedDate,,true,{policy}" for table, policy in POLICIES.items() if table != "Frozen"], HEADER
    )
    assert assert_replicas_equal(evolving) == 102
    assert (
        evolving.scalar("select count(*) from _migration.schema_changes where table_key = %s", (keys["Frozen"],)) == 0
    )
    status = evolving.cli("status")
    assert status.returncode == 0, status.stderr
    lines = status.stdout.split("schema changes applied to replicas (latest 8):", 1)[1].splitlines()
    assert sorted(line.split()[2:5] for line in lines[2:]) == sorted(
        [table, change, column]
        for table in ("dbo.Items", "dbo.Kept")
        for change, column in (
            ("column_replaced", "price"),
            ("column_widened", "name"),
            ("column_dropped" if table == "dbo.Items" else "column_kept", "note"),
            ("column_added", "flag"),
        )
    ), status.stdout

    # The backfill is done: the next run reads changes only.
    with evolving.source() as conn:
        conn.execute(f"""update dbo."Items" set "Flag" = 8, "ModifiedDate" = {STAMP} where "Id" = 5""")
    entry = _table(_sync(evolving))
    assert entry["migration_type"] == "incremental" and entry["rows_landed"] == 1, entry
    assert assert_replicas_equal(evolving) == 102


def test_a_backfill_is_read_until_a_full_run_is_merged(evolving: Project) -> None:
    evolving.write_sync_tables(["dbo,Items,ModifiedDate,,true,"], HEADER)
    with evolving.source() as conn:
        conn.execute("""alter table dbo."Items" add column "Flag" integer default 7""")
    # Extracts without a merge: the replica is altered by the first, and both read every row.
    for _ in range(2):
        done = evolving.cli("--all", "--json", "--quiet")
        assert done.returncode == 0, done.stderr[-3000:]
        assert _table(json.loads(done.stdout))["migration_type"] == "full"
    assert _table(_sync(evolving))["migration_type"] == "full"
    assert assert_replicas_equal(evolving) == 50
    assert _table(_sync(evolving))["status"] == "unchanged"  # the backfill is done, and nothing changed since
    with evolving.source() as conn:
        conn.execute(f"""update dbo."Items" set "Flag" = 8, "ModifiedDate" = {STAMP} where "Id" = 5""")
    assert _table(_sync(evolving))["migration_type"] == "incremental"


def test_a_changed_primary_key_is_refused_until_a_full_refresh(evolving: Project) -> None:
    evolving.write_sync_tables(["dbo,Items,ModifiedDate,,true,"], HEADER)
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


def _replica_name(project: Project, table: str = "dbo.Items") -> str:
    names = project.planner.plan(project.planner.find(table)).names
    return f'"{names.schema}"."{names.table}"'
