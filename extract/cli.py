"""Command line: `python -m extract --table SCHEMA.TABLE | --all`, and the helper commands."""

from __future__ import annotations

import atexit
import importlib
import os
import sys
import traceback
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import NoReturn

import psycopg

from extract import run_results
from extract.config.environment import use_project_dir
from extract.core.errors import KeyValueRefused, TargetError, TidemarkError
from extract.core.secrets import mask
from extract.sync_arguments import extract_parser, reconcile_arguments, snapshot_arguments

USAGE = """\
python -m extract (--table SCHEMA.TABLE ... | --all) [--parallel N] [--master URL] [--dbt ARGS] [--every DURATION]
                        [--reconcile | --reconcile-every DURATION] [--quiet | --json]
       python -m extract --table SCHEMA.TABLE --snapshot-date YYYY-MM-DD [--snapshot-file PATH]
       python -m extract init         make a folder a tidemark dbt project (or update tidemark's files in it)
       python -m extract dbt ARGS     dbt, configured from TIDEMARK_TARGET_URL as the extract is
       python -m extract generate     write dbt sources, replica models and snapshots from the seeds
       python -m extract check        great-expectations checkpoint over the replicas, Data Docs
       python -m extract verify       row counts and content checksums, source vs replica
       python -m extract reconcile    find and repair what a watermark misses: deletes, backdated changes
       python -m extract status       the committed state per table (the state schema's _migration_state), --history
       python -m extract state ...    each table's committed state: list, show, history, set, reset, rewind, ...
       python -m extract report       one HTML page of the run history: durations, rows and lag per table, failures
       python -m extract server ...   start/stop the embedded PostgreSQL
       python -m extract demo ...     demo data: setup, change
       python -m extract sample load  a sample database (schema.json + Parquet) into the stand-in source
       python -m extract spark-archive  write the JVM class archives that speed up the JVMs' start (make install)
       python -m extract jars         the jars to give spark-submit (--jars, --driver-class-path)"""


def _run_extract(argv: Sequence[str]) -> int:
    args = extract_parser(USAGE).parse_args(argv)
    from extract.config.durations import parse_duration
    from extract.config.settings import MAX_EVERY, MIN_EVERY, load_settings
    from extract.metrics import Metrics, metrics_port_setting
    from extract.runtime.dbt import parse_dbt_args
    from extract.runtime.dbt_setup import dbt_process

    as_of, snapshot_file = snapshot_arguments(args)
    repeated = sorted({name for name in args.table or [] if args.table.count(name) > 1})
    if repeated:
        raise TidemarkError(f"--table {repeated[0]!r} is given more than once: name each table once")
    every = None if args.every is None else parse_duration(args.every, "--every", MIN_EVERY, MAX_EVERY)
    if every is not None and as_of is not None:
        raise TidemarkError("--every repeats the sync of changed rows; a --snapshot-date is landed once")
    if args.full_refresh and as_of is not None:
        raise TidemarkError("--full-refresh replaces replicas; a --snapshot-date lands into an as-of history")
    reconcile_every = reconcile_arguments(args)
    metrics_port = metrics_port_setting(args.metrics_port, every is not None)
    dbt_args = None if args.dbt is None else parse_dbt_args(args.dbt)
    settings = load_settings(
        master=args.master,
        safety_window=args.safety_window,
        partition_rows=args.partition_rows,
        parallel=args.parallel,
    )
    dbt = dbt_process(dbt_args, settings, parse_now=False, import_ahead=every is None)  # a loop imports once it lands
    # Imported once dbt's process is forked, which needs none of them.
    from extract.every import SyncEvery
    from extract.pass_request import PassRequest
    from extract.reconcile.result import ReconcileOptions
    from extract.report import print_report
    from extract.runtime.spark import SparkRuntime
    from extract.sync_pass import SyncPass

    runtime = SparkRuntime(settings.spark_master, settings.extra_jars, verbose=args.verbose, jvm_log=settings.jvm_log)
    request = PassRequest(
        table_names=None if args.all else list(args.table),
        as_of=as_of,
        snapshot_file=snapshot_file,
        quiet=args.quiet,
        json=args.json,
        verbose=args.verbose,
        reconcile_every=reconcile_every,
        reconcile_options=ReconcileOptions(allow_mass_delete=args.allow_mass_delete),
        full_catalog=args.full_catalog,
        full_refresh=args.full_refresh,
    )
    sync_pass = SyncPass(settings, runtime, dbt, request)
    if every is not None:
        metrics = None if metrics_port is None else Metrics(settings.target, settings.state_schema, metrics_port)
        try:
            return SyncEvery(every, quiet=args.quiet, json_lines=args.json, metrics=metrics).run(sync_pass)
        finally:
            runtime.stop()
    outcome = sync_pass.run(keep_runtime=False)
    run_results.record_report(outcome.report.as_json())
    if args.json:
        print_report(outcome.report.as_json())
    return outcome.exit_code


SUBCOMMANDS = (
    "init",
    "dbt",
    "generate",
    "check",
    "verify",
    "reconcile",
    "status",
    "state",
    "report",
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
            use_project_dir(value)
            return argv[:i] + argv[i + (1 if "=" in arg else 2) :]
    return argv


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    started_at = datetime.now(UTC)
    code, error = _main(argv)
    run_results.write(_without_project_dir(argv), started_at, code, error)
    return code


def _main(argv: list[str]) -> tuple[int, str | None]:
    """The exit code, and the error the command stopped with."""
    verbose = "--verbose" in argv
    try:
        argv = _take_project_dir(argv)
        if argv and not argv[0].startswith("-"):
            if argv[0] not in SUBCOMMANDS:
                print(f"error: unknown command {argv[0]!r}\nusage: {USAGE}", file=sys.stderr)
                return 2, f"unknown command {argv[0]!r}"
            return _subcommand(argv[0])(argv[1:]), None
        return _run_extract(argv), None
    except psycopg.Error as exc:
        # psycopg speaks only to the target (the source is read through JDBC): its refusal in one line.
        return _refused(TargetError(target_refusal(exc)), verbose, exc)
    except TidemarkError as exc:
        return _refused(exc, verbose, exc)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130, "interrupted"
    except SystemExit as exc:  # argparse's refusals (exit 2) and --help (0)
        code = exc.code if isinstance(exc.code, int) else 2
        return code, None if code == 0 else "the command line was refused"


def _refused(error: TidemarkError, verbose: bool, cause: BaseException) -> tuple[int, str]:
    """Say why the command stopped, in one line (the traceback too with --verbose)."""
    if verbose:
        print(mask("".join(traceback.format_exception(cause))), file=sys.stderr)
    # A key value the error is about only with --verbose.
    shown = error.verbose_message if verbose and isinstance(error, KeyValueRefused) else str(error)
    print(f"error: {mask(shown)}", file=sys.stderr)
    return error.exit_code, str(error)


def target_refusal(exc: BaseException) -> str:
    """A refusal of the target's, as a line: what the server (or the connection) said, without psycopg's
    own framing; secrets masked."""
    text = " ".join(str(exc).split())
    return mask(f"the target database refused: {text.removeprefix('connection failed: ')}")[:2000]


def _without_project_dir(argv: list[str]) -> list[str]:
    try:
        return _take_project_dir(list(argv))
    except TidemarkError:
        return argv


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
