"""`tidemark init`: make a folder a tidemark dbt project, or bring its tidemark files up to date.

tidemark's own files (its macros and state models) are replaced, so that an upgrade of tidemark
reaches them; the files a user edits (dbt_project.yml, profiles.yml, the seeds) are written only
when missing.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from extract.core.errors import TidemarkError

#: Replaced by every init: tidemark owns them.
OWNED = ("macros", "models/state")
#: Written when missing, then the user's: (file in the shipped project, file in the user's project).
STARTERS = (
    ("dbt_project.yml", "dbt_project.yml"),
    ("profiles.yml.example", "profiles.yml"),
    ("seeds/type_map.csv", "seeds/type_map.csv"),
    ("seeds/host_aliases.csv", "seeds/host_aliases.csv"),
    ("gx/great_expectations.yml", "gx/great_expectations.yml"),
    ("gx/.gitignore", "gx/.gitignore"),
)
SYNC_TABLES_HEADER = "source_schema,source_table,cursor_column,primary_key,enabled,asof_history\n"


def shipped_project() -> Path:
    """The dbt files tidemark ships: inside the installed package (setup.py puts them there), else the
    checkout this package runs from."""
    installed = Path(__file__).with_name("dbt_files")
    checkout = Path(__file__).resolve().parents[2]
    for candidate in (installed, checkout):
        if (candidate / "dbt_project.yml").is_file() and (candidate / "macros").is_dir():
            return candidate
    raise TidemarkError(f"tidemark's dbt files are missing from {installed}: reinstall tidemark")


def init_project(project_dir: Path) -> list[str]:
    """Write tidemark's dbt project into `project_dir`; returns what it wrote, relative to it."""
    shipped = shipped_project()
    if project_dir.resolve() == shipped.resolve():
        return []
    if project_dir.exists() and not project_dir.is_dir():
        raise TidemarkError(f"--project-dir {str(project_dir)!r} is a file, not a folder")
    written = []
    for name in OWNED:
        target = project_dir / name
        if target.exists():
            shutil.rmtree(target)
        shutil.copytree(shipped / name, target)
        written.append(name + "/")
    for shipped_name, name in STARTERS:
        target = project_dir / name
        if not target.exists():
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(shipped / shipped_name, target)
            written.append(name)
    sync_tables = project_dir / "seeds" / "sync_tables.csv"
    if not sync_tables.exists():
        sync_tables.write_text(SYNC_TABLES_HEADER)
        written.append("seeds/sync_tables.csv")
    (project_dir / "snapshots").mkdir(exist_ok=True)
    return written
