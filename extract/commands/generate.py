"""`python -m extract generate`: dbt sources, replica models and snapshots from the seeds."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from extract.config.file_sources import read_file_sources
from extract.config.settings import load_settings
from extract.planning.file_plan import generation_plans
from extract.planning.planner import open_planner
from extract.project.generate import Origin, write_project_files
from extract.project.model_docs import without_snapshot
from extract.runtime.spark import SparkRuntime


def main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m extract generate", description=__doc__)
    parser.add_argument("--master", help="Spark master URL")
    args = parser.parse_args(argv)
    settings = load_settings(master=args.master)
    runtime = SparkRuntime(settings.spark_master, settings.extra_jars, jvm_log=settings.jvm_log)
    with open_planner(settings, runtime) as planner:
        plans = [planner.plan(config) for config in planner.enabled_tables()]
        plans += generation_plans(read_file_sources(settings.seeds_dir), settings.state_schema)
        origin = Origin.of(settings.source, planner.aliases)
    for path in write_project_files(settings.project_dir, plans, origin):
        print(f"wrote {path.relative_to(settings.project_dir)}")
    for plan in plans:
        reason = without_snapshot(plan)
        if reason is not None:
            print(f"note: {reason}", file=sys.stderr)
    return 0
