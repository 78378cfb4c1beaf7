"""The dbt files follow the replicas: when a catalog read found a configured table's definition changed
(or a table new to a pattern, or one dropped), or a run changed a replica's columns, the pass writes them
again, as `python -m extract generate` does, before its dbt runs. Each table is written as its replica
holds it: one whose run refused a change (on_schema_change fail, a changed key) keeps the columns and
key it had, so that its snapshot and tests still run."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import psycopg

from extract.catalog_state.read import CatalogRead
from extract.config.file_sources import read_file_sources
from extract.core.errors import TidemarkError
from extract.evolution.drift import drift, replica_columns, replica_key
from extract.planning.file_plan import generation_plans
from extract.planning.planner import Planner
from extract.planning.table_plan import TablePlan
from extract.project.generate import Origin, write_project_files
from extract.source.catalog import SourceColumn
from extract.source.typemap import MappedColumn


def touches_project(read: CatalogRead | None, schema_changes: list[list[str]]) -> bool:
    """Whether the generated files may no longer describe the replicas: the catalog read found a change
    (not the tables a first read finds, which `generate` wrote from), or a run altered a replica."""
    found = read is not None and any(not (read.first and c.change == "table_added") for c in read.changes)
    return found or any(schema_changes)


def as_replicated(conn: psycopg.Connection, plan: TablePlan) -> TablePlan:
    """`plan` with the replica's columns and key, where they differ from the source's."""
    if not drift(conn, plan):
        return plan
    found = replica_columns(conn, plan.names) or []
    planned = {c.target_name: c for c in plan.columns}
    columns = [
        planned[name]
        if name in planned and planned[name].target_type == type_text
        else MappedColumn(SourceColumn(name, type_text, None, None, None, True, i), name, type_text, "text")
        for i, (name, type_text) in enumerate(found, start=1)
    ]
    table = replace(
        plan.table, columns=tuple(c.source for c in columns), primary_key=tuple(replica_key(conn, plan.names))
    )
    return replace(plan, table=table, columns=columns)


def follow_catalog(planner: Planner, project_dir: Path) -> tuple[list[Path], str | None]:
    """The files written again, or why none were (every enabled table must plan)."""
    try:
        plans = [planner.plan(config) for config in planner.enabled_tables()]
    except TidemarkError as exc:
        return [], f"the dbt files were not written again ({exc}); run python -m extract generate when fixed"
    with psycopg.connect(planner.settings.target.libpq_url, autocommit=True) as conn:
        described = [as_replicated(conn, plan) for plan in plans]
    settings = planner.settings
    described += generation_plans(read_file_sources(settings.seeds_dir), settings.state_schema)
    origin = Origin.of(planner.settings.source, planner.aliases)
    return write_project_files(project_dir, described, origin), None
