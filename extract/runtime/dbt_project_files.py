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


def project_files(project: Path) -> list[tuple[str, int, int]]:
    """(path, size, modification in ns) of every file of the project's parts, in order."""
    return sorted((str(path.relative_to(project)), s.st_size, s.st_mtime_ns) for path, s in _stats(project))


def fingerprint_of(files: list[tuple[str, int, int]]) -> tuple[int, int]:
    """(files, latest modification in ns) of `project_files`: changes when a file is added, removed or
    edited (a cheap stamp, for a process that parsed the project itself)."""
    return len(files), max((modified for _, _, modified in files), default=0)


def project_fingerprint(project: Path) -> tuple[int, int]:
    """`fingerprint_of` the project's files, without naming or ordering them."""
    return fingerprint_of([("", status.st_size, status.st_mtime_ns) for _, status in _stats(project)])
