"""The state schema upgrades a run log written by an older tidemark, and is created once per version."""

from __future__ import annotations

import psycopg

from extract.core.state_schema import StateSchema
from extract.state.run_log import SCHEMA_VERSION, ensure_state_schema
from tests.conftest import Project


def test_an_older_run_log_keeps_its_positions_under_the_new_name(project: Project) -> None:
    with project.target() as conn:
        conn.execute("create schema _migration")
        # The run log as tidemark 0.1 created it, with the column under its old name.
        conn.execute(
            """create table _migration.run_log (
                event_id bigserial primary key, run_id bigint not null, table_key text not null,
                source_schema text not null, source_table text not null, target_schema text not null,
                target_table text not null, status text not null, migration_type text not null,
                cursor_column text, watermark_used text, watermark_candidate text, source_filter text,
                rows_landed bigint, error_message text, started_at timestamptz not null, ended_at timestamptz,
                logged_at timestamptz not null default clock_timestamp(), last_pk_synced text)"""
        )
        conn.execute(
            "insert into _migration.run_log (run_id, table_key, source_schema, source_table, target_schema,"
            " target_table, status, migration_type, started_at, last_pk_synced)"
            " values (1, 'k', 's', 't', 'ts', 'tt', 'running', 'full', now(), '{\"partition\": 3}')"
        )
    with psycopg.connect(project.target_url) as conn:
        ensure_state_schema(conn, StateSchema())
        conn.commit()
    assert project.scalar("select partition_positions from _migration.runs where run_id = 1") == '{"partition": 3}'
    assert project.scalar("select obj_description('_migration'::regnamespace)") == SCHEMA_VERSION


def test_the_schema_is_left_alone_once_it_is_this_versions(project: Project) -> None:
    with psycopg.connect(project.target_url) as conn:
        ensure_state_schema(conn, StateSchema())
        conn.commit()
    with project.target() as conn:
        conn.execute("drop view _migration.pending_runs")  # would come back, were the DDL run again
    with psycopg.connect(project.target_url) as conn:
        ensure_state_schema(conn, StateSchema())
        conn.commit()
    assert project.scalar("select to_regclass('_migration.pending_runs')") is None
