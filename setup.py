"""Builds the wheel with the dbt project's own files (dbt_project.yml, macros, the state models, the seeds
tidemark ships) inside the package, so that `tidemark init` can write them into a user's project."""

from __future__ import annotations

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

#: What extract/project/scaffold.py's init writes from: the starter files and tidemark's dbt package.
PROJECT_FILES = (
    "dbt_project.yml",
    "profiles.yml.example",
    "dbt_package",
    "seeds/type_map.csv",
    "seeds/host_aliases.csv",
    "gx/great_expectations.yml",
    "gx/.gitignore",
)


class BuildWithDbtProject(build_py):
    def run(self) -> None:
        super().run()
        target = Path(self.build_lib) / "extract" / "project" / "dbt_files"
        for name in PROJECT_FILES:
            source, copy = Path(name), target / name
            copy.parent.mkdir(parents=True, exist_ok=True)
            if source.is_dir():
                shutil.copytree(source, copy, dirs_exist_ok=True)
            else:
                shutil.copy2(source, copy)


setup(cmdclass={"build_py": BuildWithDbtProject})
