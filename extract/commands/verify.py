"""`python -m extract verify`: row counts and content checksums, source vs replica; exit 1 on a difference."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from extract.run import Extractor
from extract.settings import load_settings
from extract.spark import get_spark
from extract.verify import verify_tables


def main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m extract verify", description=__doc__)
    which = parser.add_mutually_exclusive_group()
    which.add_argument("--table", action="append", metavar="SCHEMA.TABLE")
    which.add_argument("--all", action="store_true", help="every enabled table (the default)")
    parser.add_argument("--master", help="Spark master URL")
    args = parser.parse_args(argv)
    settings = load_settings(master=args.master)
    extractor = Extractor(settings, get_spark(settings.spark_master, settings.extra_jars))
    try:
        configs = [extractor.find(n) for n in args.table] if args.table else extractor.enabled_tables()
        results = verify_tables(extractor, [extractor.plan(c) for c in configs])
    finally:
        extractor.close()
    width = max([len(r.table) for r in results] + [5])
    print(f"{'table':<{width}}  {'source rows':>12}  {'replica rows':>12}  content    result")
    for r in results:
        replica = "missing" if r.replica_rows is None else str(r.replica_rows)
        content = "same" if r.source_checksum == r.replica_checksum else "different"
        print(f"{r.table:<{width}}  {r.source_rows:>12}  {replica:>12}  {content:<9}  {'ok' if r.ok else 'DIFFERENT'}")
    different = [r.table for r in results if not r.ok]
    if different:
        print(f"{len(different)} of {len(results)} table(s) differ: {', '.join(different)}", file=sys.stderr)
        return 1
    print(f"all {len(results)} table(s) match")
    return 0
