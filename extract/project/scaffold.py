"""`tidemark init`: make a folder a tidemark dbt project, or bring it up to date with this tidemark.

tidemark's macros and state model are a dbt package of their own (namespace `tidemark`), linked
into the project as dbt_packages/tidemark: an upgrade of tidemark reaches them, and nothing of the
user's is touched. The files a user edits (dbt_project.yml, profiles.yml, packages.yml, the seeds)
are written only when missing; kept ones are checked, and what they lack is named, before anything
is written.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import yaml

from extract.config import spec
from extract.config.dbt_profile import check_profile
from extract.config.environment import with_environment
from extract.config.seed_schema import seed_schema_problem
from extract.config.settings import dbt_profile_env, state_schema_from_env, target_from_env
from extract.core.errors import TidemarkError
from extract.project.package import INSTALL_PATH, PACKAGE_FOLDER, PACKAGE_NAME, install_package

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
#: Where `tidemark generate` writes the macros a project needs at its top level (the merge strategy's).
GENERATED_MACROS = "macros_generated"
#: The folders tidemark's macros lived in before they were a package: a project that still has them
#: would define each macro twice.
FORMER_MACRO_FOLDERS = ("distinct_merge", "first_sync", "bookkeeping", "asof_history", "shared", "lake")


def shipped_project() -> Path:
    """The dbt files tidemark ships: inside the installed package (setup.py puts them there), else the
    checkout this package runs from."""
    installed = Path(__file__).with_name("dbt_files")
    checkout = Path(__file__).resolve().parents[2]
    for candidate in (installed, checkout):
        if (candidate / "dbt_project.yml").is_file() and (candidate / PACKAGE_FOLDER / "dbt_project.yml").is_file():
            return candidate
    raise TidemarkError(f"tidemark's dbt files are missing from {installed}: reinstall tidemark")


def packages_yml(package: Path) -> str:
    return (
        "# tidemark's dbt package (its macros are tidemark.<name>). `tidemark init` links it as\n"
        "# dbt_packages/tidemark; after `dbt clean`, `dbt deps` or `tidemark init` brings it back.\n"
        f"packages:\n  - local: {yaml.safe_dump(str(package), default_style=chr(34)).strip()}\n"
    )


def _yaml_file(path: Path) -> dict[str, Any]:
    try:
        loaded = yaml.safe_load(path.read_text())
    except (OSError, yaml.YAMLError) as exc:
        raise TidemarkError(f"{path}: cannot be read as YAML: {' '.join(str(exc).split())}") from None
    if not isinstance(loaded, dict):
        raise TidemarkError(f"{path}: expected a YAML mapping, found {type(loaded).__name__}")
    return loaded


def project_problems(project_dir: Path, package: Path) -> list[str]:
    """What a user's kept files lack for tidemark, each in one line naming the file and the fix."""
    problems = []
    project_file = project_dir / "dbt_project.yml"
    if project_file.is_file():
        project = _yaml_file(project_file)
        name = project.get("name")
        if name == PACKAGE_NAME:
            problems.append(
                f"{project_file}: the project is named {PACKAGE_NAME!r}, as tidemark's package is: rename it"
            )
        order = next(
            (
                entry.get("search_order")
                for entry in project.get("dispatch") or []
                if isinstance(entry, dict) and entry.get("macro_namespace") == "dbt"
            ),
            None,
        )
        if not isinstance(order, list) or PACKAGE_NAME not in order or "dbt" not in order[order.index(PACKAGE_NAME) :]:
            problems.append(
                f"{project_file}: add `dispatch: [{{macro_namespace: dbt, search_order: "
                f"[{name or 'YOUR_PROJECT'!s}, {PACKAGE_NAME}, dbt]}}]` (tidemark's overrides of dbt's macros)"
            )
        macro_paths = project.get("macro-paths", ["macros"])
        if not isinstance(macro_paths, list) or GENERATED_MACROS not in macro_paths:
            problems.append(
                f"{project_file}: add {GENERATED_MACROS!r} to macro-paths (where `tidemark generate` writes "
                "the merge strategy's macro)"
            )
    packages_file = project_dir / "packages.yml"
    if packages_file.is_file():
        listed = _yaml_file(packages_file).get("packages") or []
        locals_ = [entry.get("local") for entry in listed if isinstance(entry, dict) and "local" in entry]
        if not any(_same_folder(project_dir, local, package) for local in locals_):
            problems.append(f"{packages_file}: add `- local: {package}` under packages (tidemark's package)")
    for folder in FORMER_MACRO_FOLDERS:
        former = project_dir / "macros" / folder
        if former.is_dir() and any(former.glob("tidemark_*.sql")):
            problems.append(
                f"{former}: tidemark's macros from before its package (each is now defined twice): remove "
                f"{project_dir / 'macros'}/{{{','.join(FORMER_MACRO_FOLDERS)}}} where they hold tidemark_*.sql files"
            )
            break
    problems += _profile_problems(project_dir)
    seeds_problem = seed_schema_problem(project_dir, state_schema_from_env())
    if seeds_problem is not None:
        problems.append(seeds_problem)
    link = project_dir / INSTALL_PATH
    if (link.exists() or link.is_symlink()) and not link.is_symlink():
        problems.append(f"{link}: a folder tidemark did not make; remove it, and tidemark init links its package there")
    return problems


def _profile_problems(project_dir: Path) -> list[str]:
    """A kept profile that builds elsewhere than TIDEMARK_TARGET_URL (when the target is configured)."""
    if not (project_dir / "dbt_project.yml").is_file() or not spec.TARGET_URL.given():
        return []
    target = target_from_env()
    try:
        check_profile(project_dir, target, with_environment(dbt_profile_env(target)))
    except TidemarkError as exc:
        return [str(exc)]
    return []


def _same_folder(project_dir: Path, local: object, package: Path) -> bool:
    return isinstance(local, str) and (project_dir / local).resolve() == package.resolve()


def init_project(project_dir: Path) -> list[str]:
    """Make `project_dir` a tidemark project; returns what it wrote, relative to it. Refuses (and writes
    nothing) when a file it keeps lacks what tidemark needs."""
    shipped = shipped_project()
    package = shipped / PACKAGE_FOLDER
    if project_dir.resolve() == shipped.resolve():
        return [f"{INSTALL_PATH}/"] if install_package(project_dir, package) else []
    for parent in [project_dir, *project_dir.parents]:
        if parent.exists() and not parent.is_dir():
            raise TidemarkError(f"--project-dir {str(project_dir)!r}: {str(parent)!r} is a file, not a folder")
    problems = project_problems(project_dir, package)
    if problems:
        raise TidemarkError("; ".join(problems))
    written = []
    try:
        for shipped_name, name in STARTERS:
            target = project_dir / name
            if not target.exists():
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy(shipped / shipped_name, target)
                written.append(name)
        packages_file = project_dir / "packages.yml"
        if not packages_file.exists():
            packages_file.write_text(packages_yml(package))
            written.append("packages.yml")
        sync_tables = project_dir / "seeds" / "sync_tables.csv"
        if not sync_tables.exists():
            sync_tables.write_text(SYNC_TABLES_HEADER)
            written.append("seeds/sync_tables.csv")
        (project_dir / "snapshots").mkdir(exist_ok=True)
        if install_package(project_dir, package):
            written.append(f"{INSTALL_PATH}/")
    except OSError as exc:
        raise TidemarkError(f"--project-dir {str(project_dir)!r}: {exc.strerror or exc}: {exc.filename}") from None
    return written
