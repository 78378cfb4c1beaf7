"""Command line: `python -m extract --table SCHEMA.TABLE | --all`, and the helper commands."""

from __future__ import annotations

import argparse
import atexit
import importlib
import os
import sys
import traceback
from collections.abc import Callable, Sequence
from datetime import date
from pathlib import Path
from typing import NoReturn

from extract import __version__
from extract.core.errors import EXIT_CODES, TidemarkError
from extract.core.secrets import mask

USAGE = """\
python -m extract (--table SCHEMA.TABLE ... | --all) [--parallel N] [--master URL] [--dbt ARGS] [--every DURATION]
                        [--quiet | --json]
       python -m extract --table SCHEMA.TABLE --snapshot-date YYYY-MM-DD [--snapshot-file PATH]
       python -m extract init         make a folder a tidemark dbt project (or update tidemark's files in it)
       python -m extract dbt ARGS     dbt, configured from TIDEMARK_TARGET_URL as the extract is
       python -m extract generate     write dbt sources, replica models and snapshots from the seeds
       python -m extract check        great-expectations row counts, source vs replica
       python -m extract verify       row counts and content checksums, source vs replica
       python -m extract reconcile    find and repair what a watermark misses: deletes, backdated changes
       python -m extract status       the committed state per table (_migration._migration_state)
       python -m extract server ...   start/stop the embedded PostgreSQL
       python -m extract demo ...     demo data: setup, change
       python -m extract sample load  a sample database (schema.json + Parquet) into the stand-in source
       python -m extract spark-archive  write the JVM class archive that halves Spark's start-up (make install)
       python -m extract jars         the jars to give spark-submit (--jars, --driver-class-path)"""

EPILOG = (
    "exit codes:\n"
    + "".join(f"  {code:>3}  {meaning}\n" for code, meaning in EXIT_CODES.items())
    + "With --every, the last sync's code once SIGTERM stopped it."
)

DESCRIPTION = """\
Read the rows of each configured SQL Server table that changed since its committed
watermark and land them in Postgres staging; `dbt build` then merges them into the
replicas. Tables are configured in seeds/sync_tables.csv; connections come from
TIDEMARK_SOURCE_URL (+ TIDEMARK_SOURCE_USER / TIDEMARK_SOURCE_PASSWORD) and
TIDEMARK_TARGET_URL."""


def _extract_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m extract",
        usage=USAGE,
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    which = parser.add_mutually_exclusive_group(required=True)
    which.add_argument("--table", action="append", metavar="SCHEMA.TABLE", help="a table from sync_tables.csv")
    which.add_argument("--all", action="store_true", help="every enabled table in sync_tables.csv")
    parser.add_argument("--master", help="Spark master URL (default local[*], or TIDEMARK_SPARK_MASTER)")
    parser.add_argument(
        "--safety-window",
        metavar="DURATION",
        help="re-read this long before the committed watermark, for late commits "
        "(default 5m, or TIDEMARK_SAFETY_WINDOW; 0s turns it off)",
    )
    parser.add_argument(
        "--partition-rows",
        metavar="N",
        help="cut every table's batch every N rows (default: PARTITION_THRESHOLD, MAX_PARTITIONS_PER_TABLE "
        "and MIN_PARTITION_ROWS decide)",
    )
    parser.add_argument(
        "--parallel",
        metavar="N",
        help="tables to sync at once (default 2, or MAX_PARALLEL_TRANSFERS)",
    )
    parser.add_argument(
        "--snapshot-date",
        metavar="YYYY-MM-DD",
        help="land a full snapshot of the table as of this date for its as-of history (asof_history in "
        "sync_tables.csv), instead of the changed rows; dates may come in any order",
    )
    parser.add_argument(
        "--snapshot-file",
        metavar="PATH",
        help="with --snapshot-date and one --table: read the snapshot from this CSV (with a header) or Parquet "
        "file or folder instead of the source table",
    )
    parser.add_argument(
        "--dbt",
        metavar="ARGS",
        help="then run dbt with these arguments in this process, e.g. --dbt build or --dbt 'run --select "
        "replica'; dbt reads its project while the tables land, so this is quicker than running dbt afterwards",
    )
    parser.add_argument(
        "--every",
        metavar="DURATION",
        help="sync again every DURATION (such as 30s, 5m or 1h) in this process, which keeps Spark and dbt "
        "loaded between syncs, until SIGTERM; SIGUSR1 syncs at once; --json prints a line per sync",
    )
    _add_general_options(parser)
    return parser


def _add_general_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--project-dir",
        metavar="DIR",
        help="the dbt project (default TIDEMARK_PROJECT_DIR, else the current folder); any command takes it",
    )
    parser.add_argument("--version", action="version", version=f"tidemark {__version__}")
    parser.add_argument("--quiet", action="store_true", help="print errors only")
    parser.add_argument(
        "--verbose", action="store_true", help="with an error, also print its Python and Java stack traces"
    )
    parser.add_argument(
        "--json", action="store_true", help="print a machine-readable summary on stdout (progress is left out)"
    )


def _snapshot_arguments(args: argparse.Namespace) -> tuple[date | None, Path | None]:
    """The snapshot date and file asked for, checked before anything starts."""
    from extract.asof.run import parse_snapshot_date

    if args.snapshot_file is not None and args.snapshot_date is None:
        raise TidemarkError(f"--snapshot-file {args.snapshot_file!r} needs --snapshot-date: the date it is as of")
    if args.snapshot_file is not None and (args.all or len(args.table) != 1):
        raise TidemarkError("--snapshot-file holds one table: name it with a single --table")
    as_of = None if args.snapshot_date is None else parse_snapshot_date(args.snapshot_date)
    return as_of, None if args.snapshot_file is None else Path(args.snapshot_file)


def _run_extract(argv: Sequence[str]) -> int:
    args = _extract_parser().parse_args(argv)
    from extract.config.settings import MAX_EVERY, MIN_EVERY, dbt_profile_env, load_settings, parse_duration
    from extract.every import SyncEvery
    from extract.runtime.dbt import InProcessDbt, parse_dbt_args
    from extract.runtime.spark import SparkRuntime
    from extract.sync_pass import PassRequest, SyncPass, print_report

    as_of, snapshot_file = _snapshot_arguments(args)
    repeated = sorted({name for name in args.table or [] if args.table.count(name) > 1})
    if repeated:
        raise TidemarkError(f"--table {repeated[0]!r} is given more than once: name each table once")
    every = None if args.every is None else parse_duration(args.every, "--every", MIN_EVERY, MAX_EVERY)
    if every is not None and as_of is not None:
        raise TidemarkError("--every repeats the sync of changed rows; a --snapshot-date is landed once")
    dbt_args = None if args.dbt is None else parse_dbt_args(args.dbt)
    settings = load_settings(
        master=args.master,
        safety_window=args.safety_window,
        partition_rows=args.partition_rows,
        parallel=args.parallel,
    )
    if dbt_args is not None:
        # dbt's profile reads the target's parts: TIDEMARK_TARGET_URL alone configures both.
        os.environ.update(dbt_profile_env(settings.target))
    dbt = None if dbt_args is None else InProcessDbt(dbt_args, settings.project_dir)
    runtime = SparkRuntime(settings.spark_master, settings.extra_jars, verbose=args.verbose, jvm_log=settings.jvm_log)
    request = PassRequest(
        table_names=None if args.all else list(args.table),
        as_of=as_of,
        snapshot_file=snapshot_file,
        quiet=args.quiet,
        json=args.json,
        verbose=args.verbose,
    )
    sync_pass = SyncPass(settings, runtime, dbt, request)
    if every is not None:
        try:
            return SyncEvery(every, quiet=args.quiet, json_lines=args.json).run(sync_pass)
        finally:
            runtime.stop()
    outcome = sync_pass.run(keep_runtime=False)
    if args.json:
        print_report(outcome.report)
    return outcome.exit_code


SUBCOMMANDS = (
    "init",
    "dbt",
    "generate",
    "check",
    "verify",
    "reconcile",
    "status",
    "server",
    "demo",
    "sample",
    "spark-archive",
    "jars",
)


def _subcommand(name: str) -> Callable[[Sequence[str]], int]:
    # Imported on demand: some pull in Spark or great-expectations, which take seconds to load.
    module = importlib.import_module(f"extract.commands.{name.replace('-', '_')}")
    entry: Callable[[Sequence[str]], int] = module.main
    return entry


def _take_project_dir(argv: list[str]) -> list[str]:
    """Apply --project-dir DIR (anywhere on the line, for every command) as TIDEMARK_PROJECT_DIR."""
    for i, arg in enumerate(argv):
        if arg == "--project-dir" or arg.startswith("--project-dir="):
            value = arg.partition("=")[2] if "=" in arg else (argv[i + 1] if i + 1 < len(argv) else "")
            if not value:
                raise TidemarkError("--project-dir needs a folder: the dbt project tidemark works in")
            os.environ["TIDEMARK_PROJECT_DIR"] = value
            return argv[:i] + argv[i + (1 if "=" in arg else 2) :]
    return argv


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    verbose = "--verbose" in argv
    try:
        argv = _take_project_dir(argv)
        if argv and not argv[0].startswith("-"):
            if argv[0] not in SUBCOMMANDS:
                print(f"error: unknown command {argv[0]!r}\nusage: {USAGE}", file=sys.stderr)
                return 2
            return _subcommand(argv[0])(argv[1:])
        return _run_extract(argv)
    except TidemarkError as exc:
        if verbose:
            print(mask("".join(traceback.format_exception(exc))), file=sys.stderr)
        print(f"error: {mask(str(exc))}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


def exit_now(code: int) -> NoReturn:
    """Exit with `code` once the atexit handlers ran (dbt's and multiprocessing's clean-up, logging's last
    flush), without the interpreter's tear-down: freeing dbt's and Spark's objects one by one takes most
    of a second after a sync and changes nothing outside this process."""
    atexit._run_exitfuncs()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def console() -> None:
    """The `tidemark` command that pip installs."""
    exit_now(main())
