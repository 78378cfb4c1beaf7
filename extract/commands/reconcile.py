"""`python -m extract reconcile`: compare replicas with their sources by range checksums, and land
what repairs them (rows the source deleted, backdated changes, changed keys); `dbt build` applies it."""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from extract.core.errors import TidemarkError

_EPILOG = """\
The replica is compared inside each database: counts and checksums of key-hash ranges, split
until the differing ranges are small, then key by key. Repairs land in staging (upserts) and
in del__<table> (tombstones); the next merge applies both in one transaction and records
every deleted key in the state schema's delete_log.

settings: TIDEMARK_RECONCILE_FACTOR (ranges per split, default 32),
TIDEMARK_RECONCILE_LEAF_ROWS (compare key by key from this size, default 256),
TIDEMARK_RECONCILE_MAX_DELETE_SHARE (refuse to delete more of a replica, default 10%).
exit codes as for a sync: 0 done, 1 a table failed or was refused, 2 bad input, 3 source, 5 dbt."""


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m extract reconcile",
        description=__doc__,
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    which = parser.add_mutually_exclusive_group(required=True)
    which.add_argument("--table", action="append", metavar="SCHEMA.TABLE", help="a table from sync_tables.csv")
    which.add_argument("--all", action="store_true", help="every enabled table in sync_tables.csv")
    parser.add_argument("--dry-run", action="store_true", help="only report what differs: counts and sample keys")
    parser.add_argument(
        "--allow-mass-delete",
        action="store_true",
        help="delete even when the source is empty, or more rows than the guard allows would go (docs/reconcile.md)",
    )
    parser.add_argument(
        "--dbt",
        metavar="ARGS",
        help="run dbt with these arguments in this process: before, when runs wait for a merge, and after, "
        "to apply the repairs (e.g. --dbt build)",
    )
    parser.add_argument("--master", help="Spark master URL (default local[*], or TIDEMARK_SPARK_MASTER)")
    parser.add_argument("--parallel", metavar="N", help="tables to reconcile at once (default 2)")
    parser.add_argument("--quiet", action="store_true", help="print errors only")
    parser.add_argument("--verbose", action="store_true", help="with an error, also print its stack traces")
    parser.add_argument("--json", action="store_true", help="print a machine-readable summary on stdout")
    return parser


def main(argv: Sequence[str]) -> int:
    args = _parser().parse_args(argv)
    from extract.config.settings import load_settings
    from extract.lifecycle.context import RunContext
    from extract.planning.planner import Planner
    from extract.reconcile.result import ReconcileOptions
    from extract.reconcile_pass import ReconcilePass, ReconcileRequest
    from extract.report import print_report
    from extract.run_results import record_report
    from extract.runtime.dbt import parse_dbt_args
    from extract.runtime.dbt_setup import dbt_process
    from extract.runtime.spark import SparkRuntime

    repeated = sorted({name for name in args.table or [] if args.table.count(name) > 1})
    if repeated:
        raise TidemarkError(f"--table {repeated[0]!r} is given more than once: name each table once")
    dbt_args = None if args.dbt is None else parse_dbt_args(args.dbt)
    settings = load_settings(master=args.master, parallel=args.parallel)
    dbt = dbt_process(dbt_args, settings)
    runtime = SparkRuntime(settings.spark_master, settings.extra_jars, verbose=args.verbose, jvm_log=settings.jvm_log)
    request = ReconcileRequest(
        table_names=None if args.all else list(args.table),
        options=ReconcileOptions(dry_run=args.dry_run, allow_mass_delete=args.allow_mass_delete),
        quiet=args.quiet,
        json=args.json,
        verbose=args.verbose,
    )
    context = RunContext.open(settings, runtime)
    try:
        planner = Planner(context)
        try:
            outcome = ReconcilePass(planner, dbt, request).run()
        finally:
            planner.close()
    finally:
        context.close()
        runtime.stop()
    if args.json:
        print_report(outcome.report.as_json())
    record_report(outcome.report.as_json())
    return outcome.exit_code
