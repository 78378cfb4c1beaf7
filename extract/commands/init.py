"""`python -m extract init`: make the project folder (--project-dir, TIDEMARK_PROJECT_DIR, else the current
one) a tidemark dbt project: tidemark's dbt package linked as dbt_packages/tidemark, and dbt_project.yml,
profiles.yml, packages.yml and the seeds written when missing. Nothing of the project's own is changed:
a kept file that lacks what tidemark needs is named, with the fix, and nothing is written."""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from extract.config.environment import project_dir
from extract.project.scaffold import init_project


def main(argv: Sequence[str]) -> int:
    argparse.ArgumentParser(prog="python -m extract init", description=__doc__).parse_args(argv)
    folder = project_dir()
    written = init_project(folder)
    for name in written:
        print(f"wrote {name}")
    print(
        f"{folder} is a tidemark dbt project; list the tables to sync in seeds/sync_tables.csv"
        if written
        else f"{folder} is up to date with this tidemark: nothing to write"
    )
    return 0
