"""The table selection the checking commands share: --table (repeatable) or --all, and --master."""

from __future__ import annotations

import argparse
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from extract.config.settings import load_settings
from extract.planning.planner import Planner, open_planner
from extract.planning.table_plan import TablePlan
from extract.runtime.spark import SparkRuntime


def parser_for(command: str, description: str | None) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=f"python -m extract {command}", description=description)
    which = parser.add_mutually_exclusive_group()
    which.add_argument("--table", action="append", metavar="SCHEMA.TABLE")
    which.add_argument("--all", action="store_true", help="every enabled table (the default)")
    parser.add_argument("--master", help="Spark master URL")
    return parser


@contextmanager
def selected_plans(args: argparse.Namespace) -> Iterator[tuple[Planner, Sequence[TablePlan]]]:
    settings = load_settings(master=args.master)
    runtime = SparkRuntime(settings.spark_master, settings.extra_jars, jvm_log=settings.jvm_log)
    with open_planner(settings, runtime) as planner:
        configs = [planner.find(n) for n in args.table] if args.table else planner.enabled_tables()
        yield planner, [planner.plan(config) for config in configs]
