"""A pass merges its tables that have runs waiting (dbt builds their replicas, histories and tests, and
the state model), not every model: a configured table never synced does not fail it, and a pass with
nothing waiting runs no dbt. A pattern row of
the seed is no table: the state and `status` show the tables it takes, never the pattern itself."""

from __future__ import annotations

import json

from psycopg import sql

from tests.conftest import Project


def test_a_table_sync_builds_its_nodes_and_a_pattern_row_is_no_table(project: Project) -> None:
    project.keep_dbt_files()  # dbt's run_results.json names the nodes it built
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


def _create_tables(project: Project, tables: tuple[str, ...]) -> None:
    with project.source() as conn:
        conn.execute("create schema if not exists dbo")
        for table in tables:
            ref = sql.Identifier("dbo", table)
            conn.execute(sql.SQL('create table {} ("Id" integer primary key, "Name" text)').format(ref))
            conn.execute(sql.SQL("insert into {} values (1, 'one'), (2, 'two')").format(ref))


def _nodes_run(project: Project) -> set[str]:
    """The nodes of dbt's last run, by name: `model.PROJECT.NAME` becomes NAME."""
    results = json.loads((project.root / "target" / "run_results.json").read_text())["results"]
    return {str(result["unique_id"]).split(".", 2)[2] for result in results}


def test_a_pass_merges_the_tables_with_runs_waiting_and_runs_no_dbt_when_none_waits(project: Project) -> None:
    project.keep_dbt_files()  # dbt's run_results.json names the nodes it built
    _create_tables(project, ("Items", "Later", "Other"))
    project.write_sync_tables(["dbo,Items,,,true", "dbo,Later,,,true", "dbo,Other,,,true"])
    project.generate()
    model = {t: project.model_name(f"dbo.{t}") for t in ("Items", "Later", "Other")}
    tests = project.root / "data_tests"  # a user's tests of each replica
    tests.mkdir(exist_ok=True)
    for name in model.values():
        test = f"select * from {{{{ ref('{name}') }}}} where " + '"name" is null\n'
        (tests / f"{name}_has_names.sql").write_text(test)
    done = project.cli("--all", "--dbt", "build", "--json")
    assert done.returncode == 0, done.stderr[-3000:]
    ran = _nodes_run(project)
    assert {model["Items"], model["Later"], model["Other"], "_migration_state", "sync_tables"} <= ran
    assert all({f"{model[t]}__history", f"{model[t]}_has_names"} <= ran for t in model), ran
    # Every replica waits: selected as one (dbt scans every node once per selector), not by their names.
    selection = json.loads(done.stdout)["dbt"]["args"]
    assert "config.materialized:tidemark_replica+" in selection and f"{model['Items']}+" not in selection

    project.extract("dbo.Items")  # lands; its merge waits
    done = project.cli("--table", "dbo.Later", "--dbt", "build", "--json")
    assert done.returncode == 0, done.stderr[-3000:]
    ran = _nodes_run(project)
    assert {model["Later"], model["Later"] + "__history", "_migration_state", "sync_tables"} <= ran
    assert f"{model['Later']}_has_names" in ran, ran  # its test
    assert not any(model["Items"] in node or model["Other"] in node for node in ran), ran
    assert json.loads(done.stdout)["dbt"]["runs"] == 1
    assert f"{model['Later']}+" in json.loads(done.stdout)["dbt"]["args"]

    # With Items in the pass, the run an earlier pass left is merged with the one this pass lands.
    done = project.cli("--table", "dbo.Items", "--dbt", "run", "--json")
    assert done.returncode == 0, done.stderr[-3000:]
    assert model["Items"] in _nodes_run(project)
    assert project.scalar("select count(*) from _migration.pending_runs") == 0

    # A pass in which nothing lands (another sync of the table holds it) runs no dbt.
    other = project.planner.names(project.planner.find("dbo.Other")).table_key
    with project.target() as holder:
        holder.execute("select pg_advisory_lock(hashtext(%s))", ("tidemark:extract:" + other,))
        done = project.cli("--table", "dbo.Other", "--dbt", "build", "--json")
    assert done.returncode == 1, done.stderr[-3000:]
    dbt = json.loads(done.stdout)["dbt"]
    assert (dbt["args"][0], dbt["runs"], dbt["success"], dbt["error"]) == ("build", 0, True, None), dbt
    assert "dbt build: no table has a run waiting for a merge" in done.stderr

    # A reconcile merges the repairs of the tables it found different, after merging none before.
    with project.source() as conn:
        conn.execute('delete from dbo."Items" where "Id" = 2')
    done = project.cli("reconcile", "--all", "--allow-mass-delete", "--dbt", "run", "--json")
    assert done.returncode == 0, done.stderr[-3000:]
    assert json.loads(done.stdout)["dbt"]["runs"] == 1
    assert _nodes_run(project) == {model["Items"], "_migration_state"}  # run: no seed, no test

    # Arguments that choose nodes run as given.
    done = project.cli("--table", "dbo.Later", "--dbt", "build --select sync_tables", "--quiet")
    assert done.returncode == 0, done.stderr[-3000:]
    assert _nodes_run(project) == {"sync_tables"}
