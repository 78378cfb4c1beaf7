"""One reconcile of dbo.Items in a project, its merge, and the notes it wrote."""

from __future__ import annotations

from extract.core.observer import Event, Note
from extract.readers.reconcile_repairs import reconcile_table
from extract.reconcile.result import ReconcileOptions, ReconcileResult
from tests.conftest import Project


def reconcile_items(project: Project, options: ReconcileOptions | None = None) -> tuple[ReconcileResult, list[str]]:
    notes: list[str] = []

    def observe(event: Event) -> None:
        if isinstance(event, Note):
            notes.append(event.text)

    planner = project.planner
    result = reconcile_table(
        planner.context, planner.plan(planner.find("dbo.Items")), options or ReconcileOptions(), observe
    )
    project.merge()
    return result, notes


def changes(result: ReconcileResult) -> tuple[int, int, int]:
    return result.inserted, result.updated, result.deleted
