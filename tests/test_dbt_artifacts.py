"""A pass's dbt writes the whole manifest only when the project changed since dbt last wrote it; its
run_results.json is written every time, and names the nodes that pass ran."""

from __future__ import annotations

import json
import os

from psycopg import sql

from extract.runtime.dbt_artifacts import FILE_NAME
from tests.conftest import Project


def _run_results(project: Project) -> dict[str, object]:
    loaded: dict[str, object] = json.loads((project.root / "target" / "run_results.json").read_text())
    return loaded


def _nodes(results: dict[str, object]) -> set[str]:
    return {str(entry["unique_id"]).split(".", 2)[2] for entry in results["results"]}  # type: ignore[attr-defined]


def test_an_unchanged_project_keeps_its_manifest_and_gets_the_pass_run_results(project: Project) -> None:
    project.keep_dbt_files()
    with project.source() as conn:
        conn.execute("create schema dbo")
        for table in ("Items", "Other"):
            ref = sql.Identifier("dbo", table)
            conn.execute(sql.SQL('create table {} ("Id" integer primary key, "Name" text)').format(ref))
            conn.execute(sql.SQL("insert into {} values (1, 'one')").format(ref))
    project.write_sync_tables(["dbo,Items,,,true", "dbo,Other,,,true"])
    project.generate()
    items, other = project.model_name("dbo.Items"), project.model_name("dbo.Other")
    manifest = project.root / "target" / "manifest.json"

    done = project.cli("--all", "--dbt", "build")
    assert done.returncode == 0, done.stderr[-3000:]
    written = manifest.stat().st_mtime_ns
    assert (project.root / "target" / FILE_NAME).is_file()
    assert {items, other} <= _nodes(_run_results(project))

    # Same project: the manifest stays as dbt wrote it, the run results are this pass's.
    done = project.cli("--table", "dbo.Other", "--dbt", "build")
    assert done.returncode == 0, done.stderr[-3000:]
    assert manifest.stat().st_mtime_ns == written
    ran = _nodes(_run_results(project))
    assert other in ran and items not in ran, ran

    # A test added to the project: dbt writes the manifest again, with it.
    tests = project.root / "data_tests"
    tests.mkdir(exist_ok=True)
    (tests / "items_have_names.sql").write_text(f"select * from {{{{ ref('{items}') }}}} where " + "name is null\n")
    done = project.cli("--table", "dbo.Items", "--dbt", "build")
    assert done.returncode == 0, done.stderr[-3000:]
    assert manifest.stat().st_mtime_ns > written
    assert "test.tidemark_replicas.items_have_names" in json.loads(manifest.read_text())["nodes"]
    assert items in _nodes(_run_results(project))

    # Another dbt command wrote the manifest meanwhile (another target, say): the next pass writes it again.
    rewritten = manifest.stat().st_mtime_ns
    os.utime(manifest, ns=(rewritten - 10**9, rewritten - 10**9))
    done = project.cli("--table", "dbo.Other", "--dbt", "build")
    assert done.returncode == 0, done.stderr[-3000:]
    assert manifest.stat().st_mtime_ns > rewritten


def test_arguments_that_choose_the_writes_are_left_to_dbt(project: Project) -> None:
    """`--no-write-json` given: dbt writes nothing, and no run results are written for it."""
    project.keep_dbt_files()
    with project.source() as conn:
        conn.execute("create schema dbo")
        conn.execute('create table dbo."Items" ("Id" integer primary key, "Name" text)')
        conn.execute("insert into dbo.\"Items\" values (1, 'one')")
    project.write_sync_tables(["dbo,Items,,,true"])
    project.generate()
    done = project.cli("--all", "--dbt", "build --no-write-json")
    assert done.returncode == 0, done.stderr[-3000:]
    assert not (project.root / "target" / "run_results.json").exists()
    assert not (project.root / "target" / FILE_NAME).exists()
