"""`python -m extract check`: great-expectations row counts, source vs replica; exit 1 on a mismatch."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from extract.checks import run_count_checks
from extract.run import Extractor
from extract.settings import load_settings
from extract.spark import get_spark


def main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m extract check", description=__doc__)
    which = parser.add_mutually_exclusive_group()
    which.add_argument("--table", action="append", metavar="SCHEMA.TABLE")
    which.add_argument("--all", action="store_true", help="every enabled table (the default)")
    parser.add_argument("--master", help="Spark master URL")
    args = parser.parse_args(argv)
    settings = load_settings(master=args.master)
    extractor = Extractor(settings, get_spark(settings.spark_master, settings.extra_jars))
    try:
        configs = [extractor.find(n) for n in args.table] if args.table else extractor.enabled_tables()
        plans = [extractor.plan(config) for config in configs]
        checks = run_count_checks(extractor, plans, settings.target)
    finally:
        extractor.close()
    width = max([len(c.table) for c in checks] + [5])
    print(f"{'table':<{width}}  {'source rows':>12}  {'replica rows':>12}  result")
    for c in checks:
        replica = "missing" if c.replica_rows is None else str(c.replica_rows)
        print(f"{c.table:<{width}}  {c.source_rows:>12}  {replica:>12}  {'ok' if c.success else 'MISMATCH'}")
    failed = [c.table for c in checks if not c.success]
    if failed:
        print(f"row counts differ for {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0
