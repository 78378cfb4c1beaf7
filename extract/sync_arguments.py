"""The sync command's options (`python -m extract --table ... | --all`), and the checks between them
that need no database."""

from __future__ import annotations

import argparse
from datetime import date, timedelta
from pathlib import Path

from extract import __version__
from extract.core.errors import EXIT_CODES, TidemarkError

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


def extract_parser(usage: str) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m extract",
        usage=usage,
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
    _add_every_options(parser)
    _add_reconcile_options(parser)
    _add_catalog_options(parser)
    _add_general_options(parser)
    return parser


def _add_every_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--every",
        metavar="DURATION",
        help="sync again every DURATION (such as 30s, 5m or 1h) in this process, which keeps Spark and dbt "
        "loaded between syncs, until SIGTERM; SIGUSR1 syncs at once; --json prints a line per sync",
    )
    parser.add_argument(
        "--metrics-port",
        metavar="PORT",
        help="with --every: serve Prometheus metrics on this port at /metrics (default TIDEMARK_METRICS_PORT; "
        "none when neither is set); TIDEMARK_METRICS_HOST says where it listens, 127.0.0.1 by default",
    )


def _add_reconcile_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--reconcile",
        action="store_true",
        help="after the merge, reconcile the tables that landed (python -m extract reconcile); needs --dbt",
    )
    parser.add_argument(
        "--reconcile-every",
        metavar="DURATION",
        help="with --every: reconcile on the first sync and then once this long has passed; needs --dbt",
    )
    parser.add_argument(
        "--allow-mass-delete",
        action="store_true",
        help="let a reconcile delete even when the source is empty or more than its limit would go",
    )


def reconcile_arguments(args: argparse.Namespace) -> timedelta | None:
    """How often a sync process reconciles: every pass (0), every DURATION, or never (None)."""
    from extract.config.durations import parse_duration
    from extract.config.settings import MAX_EVERY, MIN_EVERY

    if not args.reconcile and args.reconcile_every is None:
        if args.allow_mass_delete:
            raise TidemarkError("--allow-mass-delete is for a reconcile: give --reconcile too")
        return None
    if args.dbt is None:
        raise TidemarkError("--reconcile compares replicas once merged: give --dbt build too")
    if args.snapshot_date is not None:
        raise TidemarkError("--reconcile compares a replica with its source; a --snapshot-date lands a history")
    if args.reconcile:
        return timedelta(0)
    return parse_duration(args.reconcile_every, "--reconcile-every", MIN_EVERY, MAX_EVERY)


def _add_catalog_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--full-catalog",
        action="store_true",
        help="read every configured table's definition from the source catalog, not only those changed "
        "since the last read (TIDEMARK_CATALOG_PREPONE, default 3h, is how far back a read looks)",
    )
    parser.add_argument(
        "--full-refresh",
        action="store_true",
        help="land every row of the tables again and replace each replica with them in one transaction, "
        "with the source's columns and key as they are now (the way past a changed primary key); the dbt "
        "snapshots keep the history; with --every, on the first sync only",
    )


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


def snapshot_arguments(args: argparse.Namespace) -> tuple[date | None, Path | None]:
    """The snapshot date and file asked for, checked before anything starts."""
    from extract.readers.asof_snapshot import parse_snapshot_date

    if args.snapshot_file is not None and args.snapshot_date is None:
        raise TidemarkError(f"--snapshot-file {args.snapshot_file!r} needs --snapshot-date: the date it is as of")
    if args.snapshot_file is not None and (args.all or len(args.table) != 1):
        raise TidemarkError("--snapshot-file holds one table: name it with a single --table")
    as_of = None if args.snapshot_date is None else parse_snapshot_date(args.snapshot_date)
    return as_of, None if args.snapshot_file is None else Path(args.snapshot_file)
