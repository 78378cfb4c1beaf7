"""The files of a dbt project that its parse reads, and a cheap stamp of them."""

from __future__ import annotations

import os
from pathlib import Path

#: What dbt reads to build its manifest; a change to any of these is read again before the next run.
PROJECT_PARTS = (
    *("dbt_project.yml", "packages.yml", "models", "macros", "macros_generated", "seeds", "snapshots"),
    *("tests", "data_tests", "analyses", "dbt_packages"),
)


def project_fingerprint(project: Path) -> tuple[int, int]:
    """(files, latest modification in ns) of the project's parts: changes when a file is added, removed or
    edited. Links are followed: dbt_packages/tidemark links to the installed package."""
    files, latest = 0, 0
    for part in PROJECT_PARTS:
        root = project / part
        found = [root] if root.is_file() else []
        for folder, _, names in os.walk(root, followlinks=True):
            found += [Path(folder) / name for name in names]
        for path in found:
            try:
                latest = max(latest, path.stat().st_mtime_ns)
            except OSError:  # a link to nothing, or a file gone meanwhile
                continue
            files += 1
    return files, latest
