"""A `--table` sync merges its own tables (dbt builds their replicas, histories and tests, and the
state model), not every model: a configured table never synced does not fail it. A pattern row of
the seed is no table: the state and `status` show the tables it takes, never the pattern itself."""

from __future__ import annotations

import json

from psycopg import sql

from tests.conftest import Project


def test_a_table_sync_builds_its_nodes_and_a_pattern_row_is_no_table(project: Project) -> None:
    with project.source() as conn:
        conn.execute("create schema dbo")
        for table in ("Items", "Later", "PartA"):
            conn.execute(
                sql.SQL('create table {} ("Id" integer primary key, "Name" text)').format(sql.Identifier("dbo", table))
            )
            conn.execute(sql.SQL("insert into {} values (1, 'one'), (2, 'two')").format(sql.Identifier("dbo", table)))
    project.write_sync_tables(["dbo,Items,,,true", "dbo,Later,,,true", "dbo,Part*,,,true"])
    project.generate()

    done = project.cli("--table", "dbo.Items", "--dbt", "build", "--json")
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout)  # stdout holds the JSON alone, dbt's log went to stderr
    assert report["dbt"]["success"] is True and "dbt.Later" not in done.stderr
    assert [t["table"] for t in report["tables"]] == ["dbo.Items"]

    done = project.cli("--table", "dbo.PartA", "--dbt", "build", "--quiet")
    assert done.returncode == 0, done.stderr[-3000:]
    status = json.loads(project.cli("status", "--json").stdout)
    by_table = {row["table"]: row["sync_status"] for row in status["tables"]}
    assert by_table == {"dbo.Items": "success", "dbo.Later": "never synced", "dbo.PartA": "success"}, by_table
    history = json.loads(project.cli("status", "--history", "--json").stdout)["runs"]
    assert {run["status"] for run in history} == {"merged"}
