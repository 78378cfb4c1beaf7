"""A file source in a pass: its listing first, then, only when a file is new, changed or gone, its run."""

from __future__ import annotations

from extract.config.file_sources import FileSource
from extract.core.observer import Note, Observer
from extract.files.checkpoint import FileChanges
from extract.files.sync import find_changes, sync_files
from extract.pass_request import TableJob
from extract.planning.file_plan import generation_plan
from extract.planning.planner import Planner
from extract.report import TableReport


def file_job(planner: Planner, source: FileSource, observer: Observer) -> tuple[TableJob, TableReport | None]:
    """A file source's job, and its report when its listing finds nothing new (Spark is not started for
    it). A listing that fails is tried again by the job, which reports the failure as the source's."""
    context = planner.context
    config = generation_plan(source, context.settings.state_schema).config
    try:
        found: FileChanges | None = find_changes(context, source, observer)
    except Exception:  # the source's alone: the job meets it again, and the pass reports it as the source's
        found = None
    if found is not None and not found.anything:
        observer(Note(source.key, "no file new, changed or gone since the checkpoint: nothing to read"))
        return TableJob(config, lambda _: None), TableReport(config.key, "unchanged")
    return TableJob(config, lambda seen: sync_files(context, source, planner.type_map, seen, found)), None
