"""Which file sources a pass runs: every enabled one (--all), or those `--table` names by their replica."""

from __future__ import annotations

from extract.config.file_sources import FileSource
from extract.core.errors import TidemarkError


def split_names(sources: list[FileSource], names: list[str] | None) -> tuple[list[FileSource], list[str] | None]:
    """(the file sources to run, the names left for the tables of seeds/sync_tables.csv; None: every one)."""
    if names is None:
        return [s for s in sources if s.enabled], None
    by_key = {s.key: s for s in sources}
    chosen, rest = [], []
    for name in names:
        source = by_key.get(name) or by_key.get(name.lower())
        if source is None:
            rest.append(name)
        elif not source.enabled:
            raise TidemarkError(f"file source {name!r} is disabled in seeds/file_sources.csv (enabled is false)")
        else:
            chosen.append(source)
    return chosen, rest
