"""What a pass's checks decide before any table lands: which tables have nothing to read, and which
have rows to read."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import psycopg

from extract.catalog_state.read import CatalogRead
from extract.core.errors import SourceError
from extract.core.observer import Note, Observer
from extract.pass_request import TableJob
from extract.planning.planner import Planner
from extract.readers.unchanged import find_unchanged
from extract.report import TableReport


def unchanged_tables(
    planner: Planner,
    jobs: list[TableJob],
    read: CatalogRead | None,
    observer: Observer,
    each: Callable[..., Any],
    prepare: Callable[[], None] | None,
) -> tuple[dict[str, TableReport], set[str]]:
    """The tables a check finds with nothing to read, reported as such (the others run), and those a
    check found rows to read in. A table whose definition this pass's catalog read found changed runs, to
    follow it. `each` maps the checks over the pass's table threads, each on its own connection;
    `prepare` (dbt's parse) is called once a table is known to land."""
    changed = set() if read is None else {change.table_key for change in read.changes}
    plans = [job.checkable for job in jobs if job.checkable is not None and job.config.key not in changed]
    if prepare is not None and len(plans) < len(jobs):
        prepare()
    if not plans:
        return {}, set()
    try:
        found, with_rows = find_unchanged(planner.context, plans, each, prepare)
    except (SourceError, psycopg.Error):
        return {}, set()  # every table runs, and says what failed
    if found:
        observer(Note(None, f"{len(found)} table(s) unchanged since their watermark: nothing to read"))
    return {entry.table: TableReport(entry.table, "unchanged", entry) for entry in found}, with_rows
