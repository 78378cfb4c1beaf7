"""The files of a dbt project that its parse reads, and stamps of them."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

#: What dbt reads to build its manifest; a change to any of these is read again before the next run.
PROJECT_PARTS = (
    *("dbt_project.yml", "packages.yml", "models", "macros", "macros_generated", "seeds", "snapshots"),
    *("tests", "data_tests", "analyses", "dbt_packages"),
)


def _stats(project: Path) -> Iterator[tuple[Path, os.stat_result]]:
    """Each file of the project's parts with its status. Links are followed: dbt_packages/tidemark links
    to the installed package."""
    for part in PROJECT_PARTS:
        root = project / part
        found = [root] if root.is_file() else []
        for folder, _, names in os.walk(root, followlinks=True):
            found += [Path(folder) / name for name in names]
        for path in found:
            try:
                yield path, path.stat()
            except OSError:  # a link to nothing, or a file gone meanwhile
                continue


def project_fingerprint(project: Path) -> tuple[int, int]:
    """(files, latest modification in ns) of the project's parts: changes when a file is added, removed or
    edited (a cheap stamp, for a process that parsed the project itself)."""
    files, latest = 0, 0
    for _, status in _stats(project):
        latest = max(latest, status.st_mtime_ns)
        files += 1
    return files, latest


def project_files(project: Path) -> list[tuple[str, int, int]]:
    """(path, size, modification in ns) of every file of the project's parts, in order: also changes when a
    file is replaced by an older one."""
    return sorted((str(path.relative_to(project)), s.st_size, s.st_mtime_ns) for path, s in _stats(project))
