"""`python -m extract ... --dbt ARGS`: the merge run by dbt in the extract's own process."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from psycopg import sql

from tests.conftest import REPO, Project
from tests.demo_fixture import committed_watermark, demo, refuse_credit_limit_change
from tests.replica_check import assert_replicas_equal

__all__ = ["demo"]


def test_dbt_after_landing_merges_every_table_and_keeps_stdout_for_json(demo: Project) -> None:
    result = demo.cli("--all", "--json", "--dbt", "build")
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-4000:]
    summary = json.loads(result.stdout)  # dbt's own output went to stderr
    assert summary["failed"] == 0
    assert summary["dbt"]["success"] is True
    assert summary["dbt"]["args"][0] == "build"
    assert "Completed successfully" in result.stderr
    assert demo.scalar("select count(distinct table_key) from _migration.merge_log") == 5
    assert demo.scalar("select count(*) from _migration._migration_state where sync_status = 'success'") == 5
    assert_replicas_equal(demo)


def test_a_failed_dbt_exits_5_and_leaves_the_watermark(demo: Project) -> None:
    demo.sync_replicas()
    before = committed_watermark(demo, "customers")
    assert before is not None
    replica = refuse_credit_limit_change(demo, 5)
    failed = demo.cli("--table", "dbo.Customers", "--quiet", "--dbt", "run --select replica state")
    assert failed.returncode == 5, failed.stdout[-2000:] + failed.stderr[-2000:]
    # dbt's reason, in the line that says it failed: the model and the constraint the merge broke.
    reason = next(line for line in failed.stderr.splitlines() if "dbt run --select replica state failed (" in line)
    assert "demo__" in reason and "limit_guard" in reason and reason.endswith("what landed waits for the next merge")
    assert committed_watermark(demo, "customers") == before
    assert demo.scalar(f"select creditlimit from {replica} where customerid = 5") != 5000000
    with demo.target() as conn:
        conn.execute(f"alter table {replica} drop constraint limit_guard")
    demo.dbt("run", "--select", "replica", "state")
    after = committed_watermark(demo, "customers")
    assert after is not None and after > before
    assert demo.scalar(f"select creditlimit from {replica} where customerid = 5") == 5000000


def test_dbt_arguments_that_are_not_a_command_are_refused_before_anything_runs(demo: Project) -> None:
    for bad, why in [
        ("--select replica", "does not start with a dbt command"),
        ("docs generate", "dbt docs does not merge anything"),
        ("run --select 'replica", "No closing quotation"),
    ]:
        result = demo.cli("--all", "--dbt", bad)
        assert result.returncode == 2, result.stderr[-2000:]
        assert f"--dbt {bad!r}" in result.stderr and why in result.stderr
    assert demo.scalar("select count(*) from pg_namespace where nspname = '_migration'") == 0


def test_the_target_url_alone_configures_dbt_too(demo: Project) -> None:
    for name in ("TIDEMARK_TARGET_HOST", "TIDEMARK_TARGET_PORT", "TIDEMARK_TARGET_USER", "TIDEMARK_TARGET_DBNAME"):
        del demo.env[name]
    result = demo.cli("--all", "--dbt", "build")
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-4000:]
    assert demo.scalar("select count(*) from _migration._migration_state where sync_status = 'success'") == 5


def _last_parse(demo: Project) -> str:
    """What dbt's last invocation in the project logged, from its start."""
    log = (demo.root / "logs" / "dbt.log").read_text(errors="replace")
    return log.rsplit("Running with dbt=", 1)[1]


def test_a_users_dbt_after_the_commands_dbt_keeps_the_parsed_project(demo: Project) -> None:
    """dbt parses a project again in full when a variable dbt_project.yml reads changes, and parses a file
    again when a variable its macros read changes (each replica's merge reads the lock timeouts): the
    command's dbt must leave the environment as a user's shell has it, or every `dbt run` after it, and
    every pass after that, pays for parsing every replica again (about 18 s at 1,000 tables)."""
    demo.keep_dbt_files()
    result = demo.cli("--all", "--dbt", "build")
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-4000:]
    unchanged = "Partial parsing enabled: 0 files deleted, 0 files added, 0 files changed"
    demo.dbt("run", "--select", "state")
    last_invocation = _last_parse(demo)
    assert "Unable to do partial parsing" not in last_invocation, last_invocation[:3000]
    assert unchanged in last_invocation, last_invocation[:3000]

    ours = demo.cli("dbt", "run", "--select", "state")  # the command's dbt after the user's
    assert ours.returncode == 0, ours.stdout[-2000:] + ours.stderr[-4000:]
    assert unchanged in _last_parse(demo), _last_parse(demo)[:3000]


def test_a_checked_setup_is_trusted_until_what_the_check_read_changes(demo: Project) -> None:
    """A pass records the dbt setup it checked (a hash, runtime/dbt_check_record.py), so the next one
    need not wait for dbt's import to start; another database in the profile's environment, or other
    arguments, are checked again and refused before anything lands."""
    record = demo.root / "target" / "tidemark_dbt_check"
    assert demo.cli("--all", "--quiet", "--dbt", "build").returncode == 0
    trusted = record.read_text()
    assert len(trusted.strip()) == 64
    assert demo.cli("--all", "--quiet", "--dbt", "build").returncode == 0
    assert record.read_text() == trusted
    events = demo.scalar("select max(event_id) from _migration.run_log")

    demo.env["TIDEMARK_TARGET_DBNAME"] = "elsewhere"
    elsewhere = demo.cli("--all", "--quiet", "--dbt", "build")
    assert elsewhere.returncode == 2, elsewhere.stderr[-2000:]
    assert "'elsewhere'" in elsewhere.stderr or "/elsewhere" in elsewhere.stderr, elsewhere.stderr[-2000:]
    del demo.env["TIDEMARK_TARGET_DBNAME"]
    unknown = demo.cli("--all", "--quiet", "--dbt", "build --no-such-option")
    assert unknown.returncode == 2 and "--no-such-option" in unknown.stderr, unknown.stderr[-2000:]
    assert demo.scalar("select max(event_id) from _migration.run_log") == events
    assert record.read_text() == trusted


def test_a_run_in_a_project_whose_seeds_were_never_loaded_says_how_to_load_them(demo: Project) -> None:
    # `dbt run` loads no seeds, and the state model reads them: its failure names the seeds and the fix.
    first = demo.cli("--all", "--json", "--dbt", "run")
    assert first.returncode == 5, first.stdout[-2000:] + first.stderr[-3000:]
    hint = "the seeds sync_tables, type_map, host_aliases were never loaded into the target: `--dbt build` loads them"
    reason = next(line for line in first.stderr.splitlines() if line.startswith("dbt run failed ("))
    assert hint in reason, reason
    assert hint in json.loads(first.stdout)["dbt"]["error"]
    # The fix it gives works, and the landed runs merge with it.
    fixed = demo.cli("--all", "--dbt", "build")
    assert fixed.returncode == 0, fixed.stderr[-3000:]
    assert demo.scalar("select count(*) from _migration._migration_state where sync_status = 'success'") == 5
    assert_replicas_equal(demo)


def test_a_replica_model_of_the_incremental_kind_is_refused_until_generated_again(demo: Project) -> None:
    """Replica models were dbt incremental models (strategy distinct_merge) before tidemark's own
    materialization: such a model, or any other materialization, is refused before it writes anything,
    with the command that writes it again."""
    demo.sync_replicas()
    with demo.source() as conn:
        conn.execute(
            """update dbo."Customers" set "CreditLimit" = 1234,
                "ModifiedDate" = clock_timestamp() at time zone 'UTC' where "CustomerID" = 5"""
        )
    model = demo.model_name("dbo.Customers")
    path = demo.root / "models" / "replica" / f"{model}.sql"
    path.write_text(
        path.read_text().replace(
            "materialized='tidemark_replica'",
            "materialized='incremental', incremental_strategy='distinct_merge', tmp_relation_type='view'",
        )
    )
    assert demo.cli("--table", "dbo.Customers", "--quiet").returncode == 0
    merges = demo.scalar("select count(*) from _migration.merge_log")
    refused = demo.dbt("run", "--select", model, check=False)
    assert refused.returncode == 1
    assert "is configured as incremental (strategy distinct_merge), not tidemark_replica" in refused.stdout
    assert "`tidemark generate`" in refused.stdout
    assert demo.scalar("select count(*) from _migration.merge_log") == merges
    demo.generate()
    demo.dbt("run", "--select", model)
    assert demo.scalar("select count(*) from _migration.merge_log") == merges + 1
    assert demo.scalar(f'select creditlimit from "demo__{demo.source_db}__dbo".customers where customerid = 5') == 1234


def test_the_state_view_is_made_again_only_when_it_is_not_the_one_of_this_definition(demo: Project) -> None:
    demo.sync_replicas()
    view = "select to_regclass('_migration._migration_state')::oid"
    comment = "select obj_description(to_regclass('_migration._migration_state'), 'pg_class')"
    made, marker = demo.scalar(view), demo.scalar(comment)
    assert marker.startswith("tidemark view ")
    demo.dbt("build", "--select", "state")
    assert (demo.scalar(view), demo.scalar(comment)) == (made, marker)
    # A view tidemark did not make as it is (here, a comment of a user's) is made again, the same.
    with demo.target() as conn:
        conn.execute("comment on view _migration._migration_state is 'my notes'")
    demo.dbt("build", "--select", "state")
    assert demo.scalar(view) != made and demo.scalar(comment) == marker
    assert demo.scalar("select count(*) from _migration._migration_state where sync_status = 'success'") == 5


def test_dbt_arguments_that_change_the_parse_reach_the_nodes(demo: Project) -> None:
    """The pass reads the project's parse ahead of the run: a `--vars` that a node's config reads must be
    the run's, as with a plain `dbt build --vars`."""
    customers = demo.model_name("dbo.Customers")
    (demo.root / "models" / "customers_by_var.sql").write_text(
        "{{ config(materialized='table', alias=var('customers_alias', 'customers_by_default')) }}\n"
        f"select count(*) as customers from {{{{ ref('{customers}') }}}}\n"
    )
    # A process of its own, as a user's command: its dbt parses afresh with those variables, where a fork
    # of the test worker (demo.cli) would inherit the worker's threads and their locks.
    result = subprocess.run(
        [sys.executable, "-m", "extract", "--all", "--dbt", "build --vars '{customers_alias: customers_by_var}'"],
        env={**os.environ, **demo.env, "DBT_PROFILES_DIR": str(demo.root)},
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-4000:]
    built = "select table_name from information_schema.tables where table_name like 'customers_by_%'"
    with demo.target() as conn:
        assert [row[0] for row in conn.execute(built).fetchall()] == ["customers_by_var"]


def test_a_replica_whose_key_postgresql_does_not_enforce_is_refused_by_its_merge(demo: Project) -> None:
    """The replicas have no key test of their own: each merge checks that PostgreSQL enforces the key."""
    demo.sync_replicas()
    replica = f'"demo__{demo.source_db}__dbo".customers'
    constraint = demo.scalar(
        "select conname from pg_constraint where conrelid = %s::regclass and contype = 'p'", (replica,)
    )
    with demo.target() as conn:
        conn.execute(sql.SQL(f"alter table {replica} drop constraint {{}}").format(sql.Identifier(constraint)))
        # A unique index on another column is not the key's.
        conn.execute(f"create unique index customers_by_name on {replica} (customerid, creditlimit)")
    refused = demo.dbt("run", "--select", "replica", check=False)
    assert refused.returncode != 0
    assert 'customers": PostgreSQL does not enforce its key ("customerid")' in refused.stdout
    # A unique index on exactly the key, NOT NULL, is enforcement too (the extract's primary key is one).
    with demo.target() as conn:
        conn.execute(f"create unique index customers_by_key on {replica} (customerid)")
    demo.dbt("run", "--select", "replica")
    with demo.target() as conn:
        conn.execute(f"alter table {replica} alter column customerid drop not null")
    refused = demo.dbt("run", "--select", "replica", check=False)
    assert refused.returncode != 0 and "does not enforce its key" in refused.stdout
    listed = demo.dbt("ls", "--resource-type", "test", "--output", "name", check=False).stdout
    assert "tidemark_primary_key" not in listed
