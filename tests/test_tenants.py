"""Projects (tenants) that share one target database: each has a role and a state schema of its own
(TIDEMARK_STATE_SCHEMA), syncs exactly, and is refused the other's state and replicas."""

from __future__ import annotations

import os
from pathlib import Path

import psycopg
import pytest
from psycopg import sql
from pyspark.sql import SparkSession

from extract.core.sql_contract import MERGE_LOCK_PREFIX
from extract.core.state_schema import StateSchema
from extract.state.run_log import merge_lock_sql, schema_sql
from tests.conftest import Project, new_project
from tests.items_table import create_items
from tests.replica_check import assert_replicas_equal


def test_a_state_schema_reaches_sql_quoted_and_its_locks_are_its_own() -> None:
    hostile = StateSchema('tenant"; drop schema public; --')
    query = hostile.sql("select * from {run_log} where table_key = %s").as_string()
    assert query == 'select * from "tenant""; drop schema public; --"."run_log" where table_key = %s'
    ddl = schema_sql(hostile).as_string()
    assert 'create schema if not exists "tenant""; drop schema public; --";' in ddl
    assert 'create or replace function "tenant""; drop schema public; --".tidemark_hash64(' in ddl
    assert hostile.function_text("tidemark_hash64") == '"tenant""; drop schema public; --"."tidemark_hash64"'
    # The default schema's lock keys are the ones deployments before tenants took.
    assert merge_lock_sql(StateSchema(), "s.t")[1] == (MERGE_LOCK_PREFIX + "s.t",)
    assert merge_lock_sql(StateSchema("tenant_a"), "s.t")[1] != merge_lock_sql(StateSchema("tenant_b"), "s.t")[1]


def _as_tenant(project: Project, admin_url: str, role: str, state_schema: str) -> None:
    """The project syncs as `role` (LOGIN, CREATE on the target database, nothing more) into `state_schema`."""
    with psycopg.connect(admin_url, autocommit=True) as admin:
        admin.execute(sql.SQL("create role {} login").format(sql.Identifier(role)))
        admin.execute(
            sql.SQL("grant create on database {} to {}").format(sql.Identifier(project.target_db), sql.Identifier(role))
        )
    project.env.update(
        TIDEMARK_TARGET_URL=f"postgresql://{role}@127.0.0.1:{project.port}/{project.target_db}",
        TIDEMARK_TARGET_USER=role,
        TIDEMARK_STATE_SCHEMA=state_schema,
    )


def _sync_exactly(project: Project) -> None:
    create_items(project, 30)
    project.write_sync_tables(["dbo,Items,ModifiedDate,Id,true"])
    project.generate()
    project.sync()
    with project.source() as conn:
        conn.execute("""update dbo."Items" set "Val" = 'changed', "ModifiedDate" = '2027-01-01' where "Id" = 7""")
        conn.execute("""insert into dbo."Items" values (31, 'new', '2027-01-01')""")
    project.sync()
    assert assert_replicas_equal(project) == 31


def _relations(project: Project) -> list[sql.Composed]:
    """The project's state tables, its state model, and its replica."""
    state = StateSchema(project.env["TIDEMARK_STATE_SCHEMA"])
    plan = project.planner.plan(project.planner.enabled_tables()[0])
    names = ("run_log", "merge_log", "stream_state", "partition_log", "delete_log", "_migration_state")
    replica = sql.Identifier(plan.names.schema, plan.names.table)
    return [sql.SQL("select * from {}").format(r) for r in (*map(state.relation, names), replica)]


def test_two_projects_on_one_target_each_sync_and_are_refused_the_others(
    tmp_path: Path, pg_admin_url: str, spark: SparkSession
) -> None:
    roles = [f"tenant_a_{os.getpid()}", f"tenant_b_{os.getpid()}"]
    try:
        with (
            new_project(tmp_path / "a", pg_admin_url, spark) as first,
            new_project(tmp_path / "b", pg_admin_url, spark, target_of=first) as second,
        ):
            projects = (first, second)
            for project, role, schema in zip(projects, roles, ("tenant_a", "tenant_b"), strict=True):
                _as_tenant(project, pg_admin_url, role, schema)
                _sync_exactly(project)
                owner = project.scalar("select nspowner::regrole::text from pg_namespace where nspname = %s", (schema,))
                assert owner == role
            assert first.scalar("select to_regnamespace('_migration')") is None  # nothing in the default schema
            for project, other in (projects, projects[::-1]):
                with psycopg.connect(project.env["TIDEMARK_TARGET_URL"], autocommit=True) as conn:
                    for own in _relations(project):
                        conn.execute(own)
                    for query in _relations(other):
                        with pytest.raises(psycopg.errors.InsufficientPrivilege):
                            conn.execute(query)
    finally:
        with psycopg.connect(pg_admin_url, autocommit=True) as admin:
            for role in roles:
                admin.execute(sql.SQL("drop role if exists {}").format(sql.Identifier(role)))
