"""The dbt files follow the source's catalog: when a catalog read found a configured table's definition
changed (or a table new to a pattern), the pass writes them again, as `python -m extract generate` does,
before its dbt runs: a snapshot's check columns and the models' columns are the source's now."""

from __future__ import annotations

from pathlib import Path

from extract.catalog_state.read import CatalogRead
from extract.core.errors import TidemarkError
from extract.planning.planner import Planner
from extract.project.generate import write_project_files


def touches_project(read: CatalogRead) -> bool:
    """Whether the read found something the generated files reflect: not the tables a first read
    finds, which `generate` wrote from already."""
    return any(not (read.first and change.change == "table_added") for change in read.changes)


def follow_catalog(planner: Planner, project_dir: Path) -> tuple[list[Path], str | None]:
    """The files written again, or why none were (every enabled table must plan)."""
    try:
        plans = [planner.plan(config) for config in planner.enabled_tables()]
    except TidemarkError as exc:
        return [], f"the dbt files were not written again ({exc}); run python -m extract generate when fixed"
    return write_project_files(project_dir, plans), None
