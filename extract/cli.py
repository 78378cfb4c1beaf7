"""Command line: `python -m extract --table SCHEMA.TABLE | --all`, and the helper commands."""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict
from datetime import date
from pathlib import Path

from extract.errors import TidemarkError

USAGE = """\
python -m extract (--table SCHEMA.TABLE ... | --all) [--parallel N] [--master URL] [--dbt ARGS] [--quiet | --json]
       python -m extract --table SCHEMA.TABLE --snapshot-date YYYY-MM-DD [--snapshot-file PATH]
       python -m extract generate     write dbt sources, replica models and snapshots from the seeds
       python -m extract check        great-expectations row counts, source vs replica
       python -m extract verify       row counts and content checksums, source vs replica
       python -m extract status       the committed state per table (_migration._migration_state)
       python -m extract server ...   start/stop the embedded PostgreSQL
       python -m extract demo ...     demo data: setup, change
       python -m extract sample load  a sample database (schema.json + Parquet) into the stand-in source
       python -m extract spark-archive  write the JVM class archive that halves Spark's start-up (make install)
       python -m extract jars         the jars to give spark-submit (--jars, --driver-class-path)"""

EPILOG = """\
exit codes: 0 every table landed (and --dbt's dbt succeeded); 1 some table failed (the others still ran);
2 bad input or configuration (nothing was written); 3 the source refused; 5 --dbt's dbt failed (what
landed waits for the next merge); 130 interrupted."""

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
    parser.add_argument("--quiet", action="store_true", help="print errors only")
    parser.add_argument(
        "--json", action="store_true", help="print a machine-readable summary on stdout (progress is left out)"
    )
    return parser


def _snapshot_arguments(args: argparse.Namespace) -> tuple[date | None, Path | None]:
    """The snapshot date and file asked for, checked before anything starts."""
    from extract.snapshot_run import parse_snapshot_date

    if args.snapshot_file is not None and args.snapshot_date is None:
        raise TidemarkError(f"--snapshot-file {args.snapshot_file!r} needs --snapshot-date: the date it is as of")
    if args.snapshot_file is not None and (args.all or len(args.table) != 1):
        raise TidemarkError("--snapshot-file holds one table: name it with a single --table")
    as_of = None if args.snapshot_date is None else parse_snapshot_date(args.snapshot_date)
    return as_of, None if args.snapshot_file is None else Path(args.snapshot_file)


def _run_extract(argv: Sequence[str]) -> int:
    args = _extract_parser().parse_args(argv)
    from extract.dbt_invocation import InProcessDbt, parse_dbt_args
    from extract.progress import ConsoleObserver
    from extract.run import Extractor
    from extract.seeds import SyncTable
    from extract.settings import load_settings
    from extract.snapshot_run import SnapshotLanding
    from extract.spark import SparkRuntime

    as_of, snapshot_file = _snapshot_arguments(args)
    dbt_args = None if args.dbt is None else parse_dbt_args(args.dbt)
    settings = load_settings(
        master=args.master,
        safety_window=args.safety_window,
        partition_rows=args.partition_rows,
        parallel=args.parallel,
    )
    dbt = None if dbt_args is None else InProcessDbt(dbt_args, settings.project_dir)
    runtime = SparkRuntime(settings.spark_master, settings.extra_jars)
    extractor = Extractor(settings, runtime)
    try:
        tables = extractor.enabled_tables() if args.all else [extractor.find(name) for name in args.table]
        if as_of is not None and args.all:
            tables = [t for t in tables if t.asof_history]
            if not tables:
                raise TidemarkError("--snapshot-date --all: no enabled table has asof_history set in sync_tables.csv")
        observer = ConsoleObserver(quiet=args.quiet or args.json)

        def sync(config: SyncTable) -> dict[str, object]:
            try:
                if as_of is not None:
                    landing = SnapshotLanding(extractor, config, as_of, snapshot_file)
                    return {"status": "landed", **asdict(landing.run(observer))}
                return {"status": "landed", **asdict(extractor.run(config, observer))}
            except Exception as exc:  # one table's failure must not stop the others
                first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
                print(f"error: {config.key}: {first}", file=sys.stderr)
                return {"table": config.key, "status": "failed", "error": first}

        with ThreadPoolExecutor(max_workers=settings.max_parallel_transfers, thread_name_prefix="table") as pool:
            summary = list(pool.map(sync, tables))
        extractor.close()
        runtime.stop()
        failed = [str(entry["table"]) for entry in summary if entry["status"] == "failed"]
        # Tables that landed are merged even when another failed: its runs are simply not pending.
        dbt_ok = None if dbt is None else dbt.run(quiet=args.quiet, stdout_is_data=args.json)
        report: dict[str, object] = {"tables": summary, "failed": len(failed)}
        if dbt is not None:
            report["dbt"] = {"args": dbt.args, "success": dbt_ok}
        if args.json:
            print(json.dumps(report, indent=2))
        if failed:
            print(f"{len(failed)} of {len(tables)} table(s) failed: {', '.join(failed)}", file=sys.stderr)
            return 1
        if dbt_ok is False:
            print(f"dbt {' '.join(dbt_args or [])} failed; what landed waits for the next merge", file=sys.stderr)
            return 5
        return 0
    finally:
        extractor.close()


SUBCOMMANDS = ("generate", "check", "verify", "status", "server", "demo", "sample", "spark-archive", "jars")


def _subcommand(name: str) -> Callable[[Sequence[str]], int]:
    # Imported on demand: some pull in Spark or great-expectations, which take seconds to load.
    module = importlib.import_module(f"extract.commands.{name.replace('-', '_')}")
    entry: Callable[[Sequence[str]], int] = module.main
    return entry


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        if argv and not argv[0].startswith("-"):
            if argv[0] not in SUBCOMMANDS:
                print(f"unknown command {argv[0]!r}\nusage: {USAGE}", file=sys.stderr)
                return 2
            return _subcommand(argv[0])(argv[1:])
        return _run_extract(argv)
    except TidemarkError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
